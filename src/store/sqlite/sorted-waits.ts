// The aggregates behind SQLite's queue percentiles (src/store/statistics/queue-percentiles.ts): each
// group's waits gathered and sorted in the connection, so that a month of waits never becomes row
// objects; and, for a range of more workloads than are read one by one, every group's wait buckets
// (src/store/statistics/wait-buckets.ts) in one pass that neither sorts nor keeps the rows.
import type { Database } from './database.js';
import { SORTED_WAITS, WAIT_BUCKETS } from '../statistics/queue-percentiles.js';
import { WaitBuckets } from '../statistics/wait-buckets.js';

/** Declares SORTED_WAITS and WAIT_BUCKETS on the connection; the read queries of queue percentiles call them. */
export function registerSortedWaits(db: Database): void {
  db.aggregate(SORTED_WAITS, {
    start: (): number[] => [],
    step: (waits: number[], wait: number) => {
      waits.push(wait);
    },
    result: (waits: number[]) => Buffer.from(Float64Array.from(waits).sort().buffer),
  });
  // Two arguments a row: better-sqlite3 takes the SQL arity from the function's, its types know one.
  const addWait = (buckets: WaitBuckets, key: string, waitMs: number): void => {
    buckets.add(key, Math.floor(waitMs / 1000));
  };
  db.aggregate<WaitBuckets>(WAIT_BUCKETS, {
    start: () => new WaitBuckets(),
    step: addWait as unknown as (buckets: WaitBuckets) => void,
    // JSON: a few thousand buckets per group at most, whatever the rows.
    result: (buckets: WaitBuckets) => JSON.stringify(buckets.rows().map((row) => [row.key, row.bucket, row.n, row.low])),
  });
}
