// The percentiles of queue time on SQLite (src/store/common/queue-percentile-queries.ts): each
// group's waits gathered and sorted by an aggregate of the connection, so that a month of waits
// never becomes row objects.
import type { Database } from './database.js';
import type { QueuePercentiles, WorkloadFilter } from '../../query/ports.js';
import { percentilesOfSorted, sortedWaitsQuery, SORTED_WAITS, type PercentileOptions, type SortedWaitsRow } from '../common/queue-percentile-queries.js';
import type { StatementCache } from './workload-sql.js';

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

export function queuePercentiles(statements: StatementCache, filter: WorkloadFilter, options: PercentileOptions, now: number): QueuePercentiles {
  const query = sortedWaitsQuery(filter, options.groupBy, now);
  return percentilesOfSorted(statements.get(query.sql).all(query.params) as SortedWaitsRow[], options);
}
