// Statistics from the daily rollups on SQLite (the query: src/store/common/stats-rollup.ts).
import type { StatsGroupKey, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import { rollupStatsQuery } from '../common/stats-rollup.js';
import type { StatsRow } from '../common/stats-queries.js';
import type { StatementCache } from './workload-sql.js';

/** Rows like the query over the rows gives: one per group (sorted), or the one summary row. */
export function rollupStatsRows(statements: StatementCache, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): StatsRow[] {
  const query = rollupStatsQuery(SQLITE, filter, { groupBy, now });
  return statements.get(query.sql).all(query.params) as StatsRow[];
}
