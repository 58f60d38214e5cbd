// Statistics (summary and groups) on SQLite: the one query of src/store/common/stats-queries.ts, from
// the daily rollups when they hold the filter, else over the rows, to the same figures.
import type { TrendInterval } from '../../domain/trend-interval.js';
import type { StatsGroupKey, StatsResult, TrendsResult, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import { rawStatsQuery, rawTrendQuery, statsOfTrendRows, statsQuery, statsResult, trendQuery, trendResult, type StatsRow, type TrendRow } from '../common/stats-queries.js';
import { rollupStatsQuery } from '../common/stats-rollup.js';
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

export function workloadTrends(statements: StatementCache, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: TrendInterval }, now: number): TrendsResult {
  const query = trendQuery(SQLITE, filter, { ...options, now });
  const rows = statements.get(query.sql).all(query.params) as TrendRow[];
  return { series: trendResult(rows, options.interval), stats: statsOfTrendRows(rows, options.groupBy) };
}

/** The series query over the rows of the filter; exported so that tests can compare it with the rollups'. */
export function rawTrendRows(statements: StatementCache, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: TrendInterval }, now: number): TrendRow[] {
  const query = rawTrendQuery(SQLITE, filter, { ...options, now });
  return statements.get(query.sql).all(query.params) as TrendRow[];
}

/** The series query from the rollups; exported so that tests can compare it with the rows'. */
export function rollupTrendRows(statements: StatementCache, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: 'day' | 'week' }, now: number): TrendRow[] {
  const query = rollupStatsQuery(SQLITE, filter, { ...options, now });
  return statements.get(query.sql).all(query.params) as TrendRow[];
}

/** The statistics query over the rows of the filter; exported so that tests can compare it with the rollups'. */
export function rawStatsRows(statements: StatementCache, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): StatsRow[] {
  const query = rawStatsQuery(SQLITE, filter, { groupBy, now });
  return statements.get(query.sql).all(query.params) as StatsRow[];
}
