// The row-level reads: a page of the list and its count, names for rankings built elsewhere, active
// GPUs. Each backend runs these queries; `get` is one lookup by id that each writes itself.
import { WORKLOAD_STATUSES, type WorkloadStatus } from '../../domain/workload.js';
import type { Keyset, TeamCounts, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import type { WorkloadRow } from '../rows/row-mapping.js';
import { USAGE_JOIN } from '../sql/usage-join.js';
import { USAGE_VALUES } from '../usage/usage-columns.js';
import { RECORD_SELECT, VIEW_SELECT, whereAfter, whereOf, type SqlWhere } from '../sql/workload-sql.js';

const LIST_ORDER = 'ORDER BY w.submitted_at DESC, w.workload_id DESC';

/** One workload with its GPU aggregates and usage (null columns without any), by the id `idParam` names. */
export const viewSql = (idParam: string): string =>
  `SELECT ${VIEW_SELECT}, ${USAGE_VALUES.map((v) => `u.${v}`).join(', ')} FROM workloads w ${USAGE_JOIN} WHERE w.workload_id = ${idParam}`;

/** The page query (its `@limit` still to bind). */
export function listQuery(d: SqlDialect, filter: WorkloadFilter, after: Keyset | null): SqlWhere {
  const paged = whereAfter(d, filter, after);
  return { sql: `SELECT ${RECORD_SELECT} FROM workloads w WHERE ${paged.sql} ${LIST_ORDER} LIMIT @limit`, params: paged.params };
}

/**
 * A team scope (`initiative_id IN (...)`) leaves an engine only the whole organization's list index,
 * in order, testing each row: 200-350 ms at 1M rows in SQLite when the caller's teams are small.
 * Instead, seek each team's own (organization, initiative, submitted_at, workload_id) index for one
 * page and merge: a few page-sized reads. Each team is in the scope, so the seek may drop the scope
 * term. Beyond this many teams, the one walk costs less than the seeks.
 */
const MAX_TEAM_SEEKS = 32;

/** The teams to seek one by one for a page of `filter`, without repeats; null when one walk is better. */
export function teamsToSeek(filter: WorkloadFilter): string[] | null {
  const teams = filter.scope.initiatives;
  if (teams === null || teams.length === 0 || filter.initiativeId !== undefined || teams.length > MAX_TEAM_SEEKS) return null;
  return [...new Set(teams)];
}

/** `filter` for the seek of one team, the scope left out (the team is in it). */
export function teamFilter(filter: WorkloadFilter, team: string): WorkloadFilter {
  return { ...filter, scope: { organizationId: filter.scope.organizationId, initiatives: null }, initiativeId: team };
}

/** The first `rows` of the teams' pages (each in list order), merged in list order. */
export function mergeTeamPages(pages: readonly WorkloadRow[][], rows: number): WorkloadRow[] {
  const merged = pages.flat();
  // Same order as LIST_ORDER; ids are ASCII (Kubernetes UIDs), where JS order and SQLite's BINARY
  // (PostgreSQL's "C") agree.
  merged.sort((a, b) => b.submitted_at - a.submitted_at || (a.workload_id < b.workload_id ? 1 : a.workload_id > b.workload_id ? -1 : 0));
  return merged.slice(0, rows);
}

/**
 * Every team's page and their merge in one query (its `@limit` still to bind): PostgreSQL seeks each
 * team's index under a LATERAL join, one round trip instead of one per team.
 */
export function teamSeeksQuery(
  d: SqlDialect,
  filter: WorkloadFilter,
  options: { teams: readonly string[]; after: Keyset | null },
): SqlWhere {
  const paged = whereAfter(d, { ...filter, scope: { organizationId: filter.scope.organizationId, initiatives: null } }, options.after);
  return {
    sql: `SELECT page.* FROM ${d.eachOf('teams', 'team')} CROSS JOIN LATERAL (
      SELECT ${RECORD_SELECT} FROM workloads w WHERE ${paged.sql} AND w.initiative_id = team.value ${LIST_ORDER} LIMIT @limit) AS page
      ORDER BY page.submitted_at DESC, page.workload_id DESC LIMIT @limit`,
    params: { ...paged.params, teams: d.listValue(options.teams) },
  };
}

/**
 * How many workloads match the filter: from a count rollup unless dates narrow it. workload_totals
 * has hundreds of rows for a large organization; workload_counts, which also has the submitter and
 * is_managed, thousands (a quarter of an unfiltered list's time went to summing them).
 */
export function countQuery(d: SqlDialect, filter: WorkloadFilter): SqlWhere {
  const dated = filter.submittedFrom !== undefined || filter.submittedBefore !== undefined;
  const totals = filter.submittedBy === undefined && filter.isManaged === undefined;
  const where = whereOf(d, filter, dated ? 'w' : totals ? 't' : 'c');
  const sql = dated
    ? `SELECT COUNT(*) AS n FROM workloads w WHERE ${where.sql}`
    : totals
      ? `SELECT ${d.sumInt('t.workloads')} AS n FROM workload_totals t WHERE ${where.sql}`
      : `SELECT ${d.sumInt('c.n')} AS n FROM workload_counts c WHERE ${where.sql}`;
  return { sql, params: where.params };
}

/**
 * The describe query (its `@ids` still to bind, as listValue). One primary-key lookup per id. In
 * SQLite, CROSS JOIN makes the id list the outer loop, and INDEXED BY the key's index (SQLite's name
 * for a TEXT primary key's) keeps a filter from choosing an organization index, which would walk the
 * organization's rows once per id. Written as `workload_id IN (json_each)`, SQLite walked the
 * organization's index once and tested each row against the list: at 1M rows the metric rankings
 * took 600 ms for about 1,200 ids (the mixed benchmark).
 */
export function describeQuery(d: SqlDialect, filter: WorkloadFilter): SqlWhere {
  const where = whereOf(d, filter);
  const ids = d.eachOf('ids', 'ids');
  const byId = d.indexedBy('sqlite_autoindex_workloads_1');
  return {
    sql: `SELECT w.workload_id, w.name, w.initiative_id
       FROM ${ids} ${d.orderedJoin} workloads AS w${byId} ON w.workload_id = ids.value
       WHERE ${where.sql}`,
    params: where.params,
  };
}

/** Σ gpu_count of the running workloads of the filter. */
export function activeGpusQuery(d: SqlDialect, filter: WorkloadFilter): SqlWhere {
  const where = whereOf(d, filter);
  return {
    sql: `SELECT ${d.sumInt('w.gpu_count')} AS gpus FROM workloads w WHERE ${where.sql} AND w.status = 'running'`,
    params: where.params,
  };
}

const TEAM_STATUS = 'organization_id, initiative_id, status';

/** Workloads by organization, initiative and status (workload_totals), for TeamCounts. */
export const teamStatusCountsSql = (d: SqlDialect): string => `SELECT ${TEAM_STATUS}, ${d.sumInt('workloads')} AS count
  FROM workload_totals GROUP BY ${TEAM_STATUS} HAVING SUM(workloads) > 0 ORDER BY ${TEAM_STATUS}`;

/** The running workloads' GPUs by organization and initiative, from the running rows' partial index. */
export const teamActiveGpusSql = (d: SqlDialect): string => `SELECT organization_id, initiative_id, ${d.sumInt('gpu_count')} AS gpus
  FROM workloads WHERE status = 'running' GROUP BY organization_id, initiative_id ORDER BY organization_id, initiative_id`;

export interface TeamStatusRow {
  organization_id: string;
  initiative_id: string;
  status: string;
  count: number;
}

export interface TeamGpusRow {
  organization_id: string;
  initiative_id: string;
  gpus: number;
}

/** TeamCounts from its two queries' rows (a status only a newer version writes is left out). */
export function teamCountsOf(statuses: readonly TeamStatusRow[], gpus: readonly TeamGpusRow[]): TeamCounts {
  return {
    workloads: statuses.filter((r) => isWorkloadStatus(r.status)).map((r) => ({
      organizationId: r.organization_id, initiativeId: r.initiative_id, status: r.status as WorkloadStatus, count: Number(r.count),
    })),
    activeGpus: gpus.map((r) => ({ organizationId: r.organization_id, initiativeId: r.initiative_id, gpus: Number(r.gpus) })),
  };
}

const isWorkloadStatus = (status: string): status is WorkloadStatus => (WORKLOAD_STATUSES as readonly string[]).includes(status);
