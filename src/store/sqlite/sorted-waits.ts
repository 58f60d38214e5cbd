// The aggregate behind SQLite's queue percentiles (src/store/statistics/queue-percentiles.ts):
// each group's waits gathered and sorted in the connection, so that a month of waits never becomes
// row objects.
import type { Database } from './database.js';
import { SORTED_WAITS } from '../statistics/queue-percentiles.js';

/** Declares SORTED_WAITS on the connection; the read queries of queue percentiles call it. */
export function registerSortedWaits(db: Database): void {
  db.aggregate(SORTED_WAITS, {
    start: (): number[] => [],
    step: (waits: number[], wait: number) => {
      waits.push(wait);
    },
    result: (waits: number[]) => Buffer.from(Float64Array.from(waits).sort().buffer),
  });
}
