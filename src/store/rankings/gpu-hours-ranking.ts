// The GPU-hours ranking: the top workloads of a filter by GPU-hours at `now`, their count and mean.
// Ties go to the smaller workload_id in both orders, so a ranking is stable between calls.
//
// Finished workloads' GPU-hours never change: workloads_finished_gpu_hours holds them in order per
// (initiative, status), so each pair's top is a short walk from one end. Unfinished ones (a few
// percent) are read at `now` from their own partial index. The count and the mean come from
// workload_totals. Filters those cannot hold (submitter, managed, submission times) take the
// query over the rows, which gives the same figures. The backends run these queries and merge the
// candidates with topOf.
import type { GpuHoursRanking, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import { belowZeroAt, gpuMsFloorAt, HORIZON_INDEX, rollupsHold, totalsGpuMs } from '../sql/rollup-sql.js';
import { gpuHoursSql, gpuMsSql, whereOf, type SqlWhere } from '../sql/workload-sql.js';

export type RankingOptions = { order: 'asc' | 'desc'; limit: number; now: number };
export type RankingSource = 'rollups' | 'rows';

/** A candidate; `id` is the dialect's rowId, by which the winners are described. */
export interface Ranked {
  id: number | string;
  workload_id: string;
  gpu_hours: number;
}

/** Count and GPU-hours of the whole filter. */
export interface RankingOverall {
  n: number;
  gpu_hours: number;
}

export interface RankedAbout {
  id: number | string;
  name: string;
  initiative_id: string;
}

/** Where the ranking of `filter` comes from. */
export function rankingSource(filter: WorkloadFilter): RankingSource {
  return rollupsHold(filter, { status: true }) ? 'rollups' : 'rows';
}

const directionOf = (options: Pick<RankingOptions, 'order'>) => (options.order === 'asc' ? 'ASC' : 'DESC');

/**
 * The expression of workloads_finished_gpu_hours, word for word (`w.` aside); for a finished row it
 * is gpuHoursSql to the last bit (COALESCE(completed_at, @now) is completed_at).
 */
export const finishedGpuHoursSql = (d: SqlDialect): string => {
  const gpuSeconds = `w.gpu_seconds_closed + w.open_gpus * (w.completed_at / ${d.float('1000.0')}) - w.open_gpu_start_sum`;
  return `(${d.greatest(d.float('0.0'), gpuSeconds)} / ${d.float('3600.0')})`;
};

/** The (initiative, status) pairs of the filter that have workloads. */
export function rankedPairsQuery(d: SqlDialect, filter: WorkloadFilter): SqlWhere {
  const totals = whereOf(d, filter, 't');
  const pair = 't.initiative_id, t.status';
  return {
    sql: `SELECT ${pair} FROM workload_totals t WHERE ${totals.sql} GROUP BY ${pair} HAVING SUM(t.workloads) > 0`,
    params: totals.params,
  };
}

/**
 * The top @limit finished workloads of one (initiative, status) pair of @org, the pair given as SQL
 * expressions (`@initiative` and `@status` parameters, or a lateral row's columns).
 */
export function finishedTopSql(d: SqlDialect, options: { initiative: string; status: string; order: 'asc' | 'desc' }): string {
  const { initiative, status } = options;
  const byGpuHours = d.indexedBy('workloads_finished_gpu_hours');
  return `SELECT w.${d.rowId} AS id, w.workload_id, ${finishedGpuHoursSql(d)} AS gpu_hours FROM workloads w${byGpuHours}
     WHERE w.organization_id = @org AND w.initiative_id = ${initiative} AND w.status = ${status} AND w.completed_at IS NOT NULL
     ORDER BY gpu_hours ${directionOf(options)}, w.workload_id ASC LIMIT @limit`;
}

/** One query for every pair's top (PostgreSQL: one round trip instead of one per pair). */
export function finishedTopsQuery(d: SqlDialect, filter: WorkloadFilter, options: RankingOptions): SqlWhere {
  const pairs = rankedPairsQuery(d, filter);
  const best = finishedTopSql(d, { initiative: 'pair.initiative_id', status: 'pair.status', order: options.order });
  return {
    sql: `SELECT best.id, best.workload_id, best.gpu_hours FROM (${pairs.sql}) AS pair CROSS JOIN LATERAL (${best}) AS best`,
    params: { ...pairs.params, org: filter.scope.organizationId, limit: options.limit },
  };
}

/** What a ranking orders by: the SQL of the value at @now and the column it is selected as. */
export interface RankedValue {
  sql: string;
  as: string;
}

const GPU_HOURS = (d: SqlDialect): RankedValue => ({ sql: gpuHoursSql(d), as: 'gpu_hours' });

/** The top @limit unfinished workloads of the filter at @now. */
export function unfinishedTopQuery(d: SqlDialect, filter: WorkloadFilter, options: RankingOptions): SqlWhere {
  return openTopQuery(d, filter, options, GPU_HOURS(d), 'w.completed_at IS NULL');
}

/** The top @limit of the filter's rows that `condition` keeps from the unfinished rows' index, by `value` at @now. */
export function openTopQuery(
  d: SqlDialect,
  filter: WorkloadFilter,
  options: RankingOptions,
  value: RankedValue,
  condition: string,
): SqlWhere {
  const where = whereOf(d, filter);
  return {
    sql: `SELECT w.${d.rowId} AS id, w.workload_id, ${value.sql} AS ${value.as} FROM workloads w${d.indexedBy(HORIZON_INDEX)}
         WHERE ${where.sql} AND ${condition} ORDER BY ${value.as} ${directionOf(options)}, w.workload_id ASC LIMIT @limit`,
    params: { ...where.params, now: options.now, limit: options.limit },
  };
}

/** The top @limit workloads of the filter over the rows. */
export function rawTopQuery(d: SqlDialect, filter: WorkloadFilter, options: RankingOptions, value: RankedValue = GPU_HOURS(d)): SqlWhere {
  const where = whereOf(d, filter);
  return {
    sql: `SELECT w.${d.rowId} AS id, w.workload_id, ${value.sql} AS ${value.as} FROM workloads w
       WHERE ${where.sql} ORDER BY ${value.as} ${directionOf(options)}, w.workload_id ASC LIMIT @limit`,
    params: { ...where.params, now: options.now, limit: options.limit },
  };
}

/** Count and GPU-hours of the filter, summed in whole GPU-ms (as rawCountQuery does, to the last bit). */
export function totalsCountQuery(d: SqlDialect, filter: WorkloadFilter, now: number): SqlWhere {
  const totals = whereOf(d, filter, 't');
  const where = whereOf(d, filter);
  // The unfinished rows that may read below 0 at @now, whose floors the linear totals lack.
  const belowZeroRows = `workloads w${d.indexedBy(HORIZON_INDEX)} WHERE ${where.sql} AND ${belowZeroAt(d, '@now')}`;
  return {
    sql: `SELECT ${d.sumInt('n')} AS n, ${d.total('gpu_ms')} / ${d.float('3600000.0')} AS gpu_hours FROM (
         SELECT t.workloads AS n, ${totalsGpuMs(d, 't', '@now')} AS gpu_ms FROM workload_totals t WHERE ${totals.sql}
         UNION ALL
         SELECT 0, ${gpuMsFloorAt(d, '@now')} FROM ${belowZeroRows})${d.subqueryAlias('figures')}`,
    params: { ...where.params, now },
  };
}

export function rawCountQuery(d: SqlDialect, filter: WorkloadFilter, now: number): SqlWhere {
  const where = whereOf(d, filter);
  return {
    sql: `SELECT COUNT(*) AS n, ${d.total(gpuMsSql(d, '@now'))} / ${d.float('3600000.0')} AS gpu_hours FROM workloads w WHERE ${where.sql}`,
    params: { ...where.params, now },
  };
}

/** Names and initiatives of the winners only, by rowId. */
export function rankedAboutQuery(d: SqlDialect, ids: readonly (number | string)[]): SqlWhere {
  return {
    sql: `SELECT w.${d.rowId} AS id, w.name, w.initiative_id FROM workloads w WHERE ${d.inList(`w.${d.rowId}`, 'ids')}`,
    params: { ids: d.listValue(ids as readonly string[] | readonly number[]) },
  };
}

/** The first `limit` of the candidates in the ranking's order. */
export function topOf(candidates: readonly Ranked[], options: Pick<RankingOptions, 'order' | 'limit'>): Ranked[] {
  const sign = options.order === 'asc' ? 1 : -1;
  return [...candidates]
    .sort((a, b) => sign * (a.gpu_hours - b.gpu_hours) || compareBinary(a.workload_id, b.workload_id))
    .slice(0, options.limit);
}

export function rankingResult(top: readonly Ranked[], overall: RankingOverall, about: readonly RankedAbout[]): GpuHoursRanking {
  const described = new Map(about.map((row) => [row.id, row]));
  return {
    entries: top.map((row) => {
      const found = described.get(row.id) ?? { name: '', initiative_id: '' };
      return { workloadId: row.workload_id, name: found.name, initiativeId: found.initiative_id, gpuHours: row.gpu_hours };
    }),
    totalCount: overall.n,
    average: overall.n === 0 ? null : overall.gpu_hours / overall.n,
  };
}

/**
 * SQLite's BINARY order of TEXT, and PostgreSQL's under COLLATE "C" (UTF-8 bytes); JS `<` compares
 * UTF-16 units, which differs past U+FFFF.
 */
export function compareBinary(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}
