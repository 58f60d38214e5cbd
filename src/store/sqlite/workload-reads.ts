// The row-level reads on SQLite: a page of the list, one workload, names for rankings built
// elsewhere, active GPUs; the queries are the shared ones (src/store/common/workload-reads.ts).
import type { WorkloadRecord, WorkloadView } from '../../domain/workload.js';
import type { Keyset, ListPage, TeamCounts, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import { toRecord, toView, type ViewRow, type WorkloadRow } from '../common/row-mapping.js';
import * as shared from '../common/workload-reads.js';
import { RECORD_SELECT, type SqlWhere } from '../common/workload-sql.js';
import type { StatementCache } from './workload-sql.js';

export function listWorkloads(
  statements: StatementCache,
  filter: WorkloadFilter,
  page: { limit: number; after: Keyset | null },
): ListPage {
  // One extra row tells whether another page follows without a second query.
  const rows = pageRows(statements, filter, page.after, page.limit + 1);
  const hasMore = rows.length > page.limit;
  return { items: rows.slice(0, page.limit).map(toRecord), totalCount: countMatches(statements, filter), hasMore };
}

/** A team scope seeks each team's index for one page and merges them here (shared.teamsToSeek). */
function pageRows(statements: StatementCache, filter: WorkloadFilter, after: Keyset | null, rows: number): WorkloadRow[] {
  const teams = shared.teamsToSeek(filter);
  if (teams === null) return queryRows(statements, filter, after, rows);
  return shared.mergeTeamPages(teams.map((team) => queryRows(statements, shared.teamFilter(filter, team), after, rows)), rows);
}

function queryRows(statements: StatementCache, filter: WorkloadFilter, after: Keyset | null, rows: number): WorkloadRow[] {
  const query = listQuery(filter, after);
  return statements.get(query.sql).all({ ...query.params, limit: rows }) as WorkloadRow[];
}

/** How many workloads match the filter (shared.countQuery). */
export function countMatches(statements: StatementCache, filter: WorkloadFilter): number {
  const query = shared.countQuery(SQLITE, filter);
  return (statements.get(query.sql).get(query.params) as { n: number }).n;
}

/** The page query (its `@limit` still to bind); exported for EXPLAIN QUERY PLAN in tests and benchmarks. */
export function listQuery(filter: WorkloadFilter, after: Keyset | null): SqlWhere {
  return shared.listQuery(SQLITE, filter, after);
}

export function getWorkload(statements: StatementCache, workloadId: string, now: number): WorkloadView | undefined {
  const row = statements.get(shared.viewSql('?')).get(workloadId) as ViewRow | undefined;
  return row === undefined ? undefined : toView(row, now);
}

/** The describe query (its `@ids` still to bind, a JSON array); exported for EXPLAIN QUERY PLAN in tests. */
export function describeQuery(filter: WorkloadFilter): SqlWhere {
  return shared.describeQuery(SQLITE, filter);
}

export function describeWorkloads(
  statements: StatementCache,
  workloadIds: readonly string[],
  filter: WorkloadFilter,
): Map<string, { name: string; initiativeId: string }> {
  const described = new Map<string, { name: string; initiativeId: string }>();
  if (workloadIds.length === 0) return described;
  const query = describeQuery(filter);
  const rows = statements
    .get(query.sql)
    .all({ ...query.params, ids: SQLITE.listValue(workloadIds) }) as Pick<WorkloadRow, 'workload_id' | 'name' | 'initiative_id'>[];
  for (const row of rows) described.set(row.workload_id, { name: row.name, initiativeId: row.initiative_id });
  return described;
}

export function activeGpus(statements: StatementCache, filter: WorkloadFilter): number {
  const query = shared.activeGpusQuery(SQLITE, filter);
  return (statements.get(query.sql).get(query.params) as { gpus: number }).gpus;
}

export function teamCounts(statements: StatementCache): TeamCounts {
  return shared.teamCountsOf(
    statements.get(shared.teamStatusCountsSql(SQLITE)).all() as shared.TeamStatusRow[],
    statements.get(shared.teamActiveGpusSql(SQLITE)).all() as shared.TeamGpusRow[],
  );
}

/** Pending and running workloads of a cluster, for the indexer to reconcile after a relist. */
export function listUnfinished(statements: StatementCache, clusterId: string): WorkloadRecord[] {
  const rows = statements
    .get(`SELECT ${RECORD_SELECT} FROM workloads w WHERE w.cluster_id = ? AND w.status IN ('pending', 'running')`)
    .all(clusterId) as WorkloadRow[];
  return rows.map(toRecord);
}
