// Statistics (summary and groups) on SQLite: the one query of src/store/common/stats-queries.ts, from
// the daily rollups when they hold the filter, else over the rows, to the same figures.
import type { StatsGroupKey, StatsResult, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import { rawStatsQuery, statsQuery, statsResult, type StatsRow } from '../common/stats-queries.js';
import type { StatementCache } from './workload-sql.js';

export function workloadStats(
  statements: StatementCache,
  filter: WorkloadFilter,
  groupBy: StatsGroupKey | null,
  now: number,
): StatsResult {
  const query = statsQuery(SQLITE, filter, { groupBy, now });
  return statsResult(statements.get(query.sql).all(query.params) as StatsRow[], groupBy);
}

/** The statistics query over the rows of the filter; exported so that tests can compare it with the rollups'. */
export function rawStatsRows(statements: StatementCache, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): StatsRow[] {
  const query = rawStatsQuery(SQLITE, filter, { groupBy, now });
  return statements.get(query.sql).all(query.params) as StatsRow[];
}
