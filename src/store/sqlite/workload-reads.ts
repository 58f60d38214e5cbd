// The row-level reads: a page of the list, one workload, names for rankings built elsewhere, active GPUs.
import type { WorkloadRecord, WorkloadView } from '../../domain/workload.js';
import type { Keyset, ListPage, WorkloadFilter } from '../../query/ports.js';
import { toRecord, toView, type GpuAggregates, type WorkloadRow } from '../row-mapping.js';
import { RECORD_SELECT, VIEW_SELECT, whereAfter, whereOf, type SqlWhere, type StatementCache } from './workload-sql.js';

const LIST_ORDER = 'ORDER BY w.submitted_at DESC, w.workload_id DESC';

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

/**
 * A team scope (`initiative_id IN (...)`) lets SQLite only walk the whole organization's list index and
 * test each row: 200-350 ms at 1M rows when the caller's teams are small. Instead, seek each team's own
 * (organization, initiative, submitted_at, workload_id) index for one page and merge: a few page-sized
 * reads. Each team is in the scope, so the seek may drop the scope term.
 */
const MAX_TEAM_SEEKS = 32;

function pageRows(statements: StatementCache, filter: WorkloadFilter, after: Keyset | null, rows: number): WorkloadRow[] {
  const teams = filter.scope.initiatives;
  if (teams === null || teams.length === 0 || filter.initiativeId !== undefined || teams.length > MAX_TEAM_SEEKS) {
    return queryRows(statements, filter, after, rows);
  }
  const scope = { organizationId: filter.scope.organizationId, initiatives: null };
  const merged = [...new Set(teams)].flatMap((team) => queryRows(statements, { ...filter, scope, initiativeId: team }, after, rows));
  // Same order as LIST_ORDER; ids are ASCII (Kubernetes UIDs), where JS and SQLite BINARY order agree.
  merged.sort((a, b) => b.submitted_at - a.submitted_at || (a.workload_id < b.workload_id ? 1 : a.workload_id > b.workload_id ? -1 : 0));
  return merged.slice(0, rows);
}

function queryRows(statements: StatementCache, filter: WorkloadFilter, after: Keyset | null, rows: number): WorkloadRow[] {
  const query = listQuery(filter, after);
  return statements.get(query.sql).all({ ...query.params, limit: rows }) as WorkloadRow[];
}

/**
 * How many workloads match the filter: from a count rollup unless dates narrow it. workload_totals
 * has hundreds of rows for a large organization; workload_counts, which also has the submitter and
 * is_managed, thousands (a quarter of an unfiltered list's time went to summing them).
 */
export function countMatches(statements: StatementCache, filter: WorkloadFilter): number {
  const dated = filter.submittedFrom !== undefined || filter.submittedBefore !== undefined;
  const totals = filter.submittedBy === undefined && filter.isManaged === undefined;
  const where = whereOf(filter, dated ? 'w' : totals ? 't' : 'c');
  const sql = dated
    ? `SELECT COUNT(*) AS n FROM workloads w WHERE ${where.sql}`
    : totals
      ? `SELECT COALESCE(SUM(t.workloads), 0) AS n FROM workload_totals t WHERE ${where.sql}`
      : `SELECT COALESCE(SUM(c.n), 0) AS n FROM workload_counts c WHERE ${where.sql}`;
  return (statements.get(sql).get(where.params) as { n: number }).n;
}

/** The page query (its `@limit` still to bind); exported for EXPLAIN QUERY PLAN in tests and benchmarks. */
export function listQuery(filter: WorkloadFilter, after: Keyset | null): SqlWhere {
  const paged = whereAfter(filter, after);
  return { sql: `SELECT ${RECORD_SELECT} FROM workloads w WHERE ${paged.sql} ${LIST_ORDER} LIMIT @limit`, params: paged.params };
}

export function getWorkload(statements: StatementCache, workloadId: string, now: number): WorkloadView | undefined {
  const row = statements.get(`SELECT ${VIEW_SELECT} FROM workloads w WHERE w.workload_id = ?`).get(workloadId) as
    | (WorkloadRow & GpuAggregates)
    | undefined;
  return row === undefined ? undefined : toView(row, now);
}

/**
 * The describe query (its `@ids` still to bind); exported for EXPLAIN QUERY PLAN in tests. One
 * primary-key lookup per id: CROSS JOIN makes the id list the outer loop, and INDEXED BY the key's
 * index (SQLite's name for a TEXT primary key's) keeps a filter from choosing an organization index,
 * which would walk the organization's rows once per id. Written as `workload_id IN (json_each)`,
 * SQLite walked the organization's index once and tested each row against the list: at 1M rows the
 * metric rankings took 600 ms for about 1,200 ids (the mixed benchmark).
 */
export function describeQuery(filter: WorkloadFilter): SqlWhere {
  const where = whereOf(filter);
  return {
    sql: `SELECT w.workload_id, w.name, w.initiative_id
       FROM json_each(@ids) AS ids CROSS JOIN workloads AS w INDEXED BY sqlite_autoindex_workloads_1 ON w.workload_id = ids.value
       WHERE ${where.sql}`,
    params: where.params,
  };
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
    .all({ ...query.params, ids: JSON.stringify(workloadIds) }) as Pick<WorkloadRow, 'workload_id' | 'name' | 'initiative_id'>[];
  for (const row of rows) described.set(row.workload_id, { name: row.name, initiativeId: row.initiative_id });
  return described;
}

export function activeGpus(statements: StatementCache, filter: WorkloadFilter): number {
  const where = whereOf(filter);
  const row = statements
    .get(`SELECT COALESCE(SUM(w.gpu_count), 0) AS gpus FROM workloads w WHERE ${where.sql} AND w.status = 'running'`)
    .get(where.params) as { gpus: number };
  return row.gpus;
}

/** Pending and running workloads of a cluster, for the indexer to reconcile after a relist. */
export function listUnfinished(statements: StatementCache, clusterId: string): WorkloadRecord[] {
  const rows = statements
    .get(`SELECT ${RECORD_SELECT} FROM workloads w WHERE w.cluster_id = ? AND w.status IN ('pending', 'running')`)
    .all(clusterId) as WorkloadRow[];
  return rows.map(toRecord);
}
