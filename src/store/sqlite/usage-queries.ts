// GPU-hours consumed inside a window on SQLite: the queries of src/store/common/usage-queries.ts, run
// one after the other on the caller's connection (one snapshot: the read worker's transaction, or the
// main thread, where no write comes between).
import type { UsageBreakdown, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import * as shared from '../common/usage-queries.js';
import type { StatementCache } from './workload-sql.js';

export function usageInWindow(
  statements: StatementCache,
  filter: WorkloadFilter,
  window: shared.UsageWindow,
  source: shared.UsageSource = 'any',
): UsageBreakdown {
  return shared.usageBreakdown(
    usageQueries(filter, window, source).map((query) => ({ rows: statements.get(query.sql).all(query.params) as shared.UsageRow[], sign: query.sign })),
  );
}

/**
 * The queries of a usage read, each giving GPU-ms per (initiative, instance type). Exported for
 * EXPLAIN QUERY PLAN in tests; `source` 'rows' keeps usage since ever off the rollups, to compare.
 */
export function usageQueries(filter: WorkloadFilter, window: shared.UsageWindow, source: shared.UsageSource = 'any'): shared.UsageQuery[] {
  return shared.usageQueries(SQLITE, filter, { window, source });
}
