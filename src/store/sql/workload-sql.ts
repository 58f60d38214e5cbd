// WorkloadFilter → WHERE clause over `workloads w`, plus the SQL forms of the time-dependent figures,
// for either engine (dialect.ts). Filters only add named parameters, never values, to the SQL text, so
// the number of distinct texts is small and every one of them is prepared once.
import type { Keyset, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect, SqlParams } from './dialect.js';
import { AGGREGATE_COLUMNS, RECORD_COLUMNS } from '../rows/row-mapping.js';

export interface SqlWhere {
  sql: string;
  params: SqlParams;
}

export const RECORD_SELECT = RECORD_COLUMNS.map((c) => `w.${c}`).join(', ');
export const VIEW_SELECT = `${RECORD_SELECT}, ${AGGREGATE_COLUMNS.map((c) => `w.${c}`).join(', ')}`;

/** Reading time of a row: its completion, or `now` (an SQL parameter, epoch ms) while it is unfinished. */
export const readAtMs = (now: string): string => `COALESCE(w.completed_at, ${now})`;

/**
 * GPU-seconds of `w` read at `now` straight from its aggregates (see the workloads table), not yet
 * floored at 0. An open pod that started after the reading time (clock skew, or a pod left open
 * past its workload's completion) counts negative here, and float rounding of the sums leaves
 * residue around 0. Every figure built on it floors it at 0, the same clamp as gpuHoursAt in
 * row-mapping.ts: gpuHoursSql directly, the usage since ever (usage-queries.ts) after taking back
 * what the aggregate counts past the window.
 */
export const rawGpuSecondsSql = (d: SqlDialect, now: string): string =>
  `(w.gpu_seconds_closed + w.open_gpus * (${readAtMs(now)} / ${d.float('1000.0')}) - w.open_gpu_start_sum)`;

/** GPU-seconds of `w` at `now`, never negative. */
export const gpuSecondsSql = (d: SqlDialect, now: string): string => d.greatest(d.float('0.0'), rawGpuSecondsSql(d, now));

/** GPU-hours of `w` at @now; twin of gpuHoursAt in row-mapping.ts. */
export const gpuHoursSql = (d: SqlDialect): string => `(${gpuSecondsSql(d, '@now')} / ${d.float('3600.0')})`;

/**
 * GPU-milliseconds of `w` at `t` (an SQL expression of epoch ms) before any floor, in exact integer
 * arithmetic: both aggregates are sums of gpus × (ms time) / 1000.0, so rounding them to ms gives
 * back whole numbers. Sums of these are exact in any order (below 2^53), so an aggregate over the
 * rows and one over the rollups (src/store/sqlite/migrations/v03-rollups.ts) agree to the last bit, on either
 * engine. They differ from the floating-point gpuHoursSql of each row by its rounding, about 1e-12
 * relative. For whole GPUs the values are within a rounding error of whole numbers, so ROUND's rule for
 * ties (away from zero in SQLite, to even in PostgreSQL) never applies; a share of a GPU (schema v12)
 * can leave a half GPU-ms, which the two engines round apart by one GPU-ms (a 1e-7 of a GPU-hour).
 */
export const gpuMsAt = (d: SqlDialect, t: string): string =>
  `(ROUND(w.gpu_seconds_closed * ${d.float('1000.0')}) - ROUND(w.open_gpu_start_sum * ${d.float('1000.0')}) + w.open_gpus * ${t})`;

/** GPU-ms of `w` at `now`, read at its completion once finished, never negative: the figure every total sums. */
export const gpuMsSql = (d: SqlDialect, now: string): string => d.greatest(d.float('0.0'), gpuMsAt(d, readAtMs(now)));

/**
 * Milliseconds run, NULL before the start. Statistics average these, not the whole seconds of
 * durationSeconds: a sum of whole seconds of running workloads is not linear in `now`, so no
 * rollup could hold it (the two means differ by less than a second).
 */
export const durationMsSql = (d: SqlDialect): string =>
  `(CASE WHEN w.started_at IS NULL THEN NULL ELSE ${d.greatest('0', `${readAtMs('@now')} - w.started_at`)} END)`;

/**
 * Milliseconds from submission to start, or to the end of a workload that never started, or to @now
 * for one still waiting; never negative: the exact ms of queueSeconds (row-mapping.ts), which
 * statistics average.
 */
export const queueMsSql = (d: SqlDialect): string => d.greatest('0', '(COALESCE(w.started_at, w.completed_at, @now) - w.submitted_at)');

/**
 * The organization, the caller's scope and the initiative filter as terms over any table alias:
 * every rollup has these columns.
 */
export function scopeWhere(d: SqlDialect, filter: WorkloadFilter, alias: string): SqlWhere {
  const terms = [`${alias}.organization_id = @org`];
  const params: SqlParams = { org: filter.scope.organizationId };
  if (filter.scope.initiatives !== null && filter.scope.initiatives.length === 0) {
    // A team scope without teams sees nothing. SQLite's `json_each('[]')` would still walk the
    // organization's index row by row (250 ms at 1M rows); a constant false term is decided once,
    // before any scan.
    terms.push(d.falseCondition);
  } else if (filter.scope.initiatives !== null) {
    terms.push(d.inList(`${alias}.initiative_id`, 'scope'));
    params['scope'] = d.listValue(filter.scope.initiatives);
  }
  if (filter.initiativeId !== undefined) {
    terms.push(`${alias}.initiative_id = @initiative`);
    params['initiative'] = filter.initiativeId;
  }
  return { sql: terms.join(' AND '), params };
}

/**
 * The filter as terms over table alias `w` (workloads), or over a rollup without times: `c`
 * (workload_counts) or `t` (workload_totals, which has neither submitter nor is_managed).
 */
export function whereOf(d: SqlDialect, filter: WorkloadFilter, alias: 'w' | 'c' | 't' = 'w'): SqlWhere {
  const { sql, params } = scopeWhere(d, filter, alias);
  const terms = [sql];
  const add = (term: string, name: string, value: string | number) => {
    terms.push(`${alias}.${term} @${name}`);
    params[name] = value;
  };
  if (filter.status !== undefined) add('status =', 'status', filter.status);
  if (filter.submittedBy !== undefined) {
    if (alias === 't') throw new Error('Cannot filter workload_totals by submitter: the rollup has none');
    add('submitted_by =', 'submittedBy', filter.submittedBy);
  }
  if (filter.isManaged !== undefined) {
    if (alias === 't') throw new Error('Cannot filter workload_totals by is_managed: the rollup has none');
    // is_managed is 0 or 1 on both engines (INTEGER, smallint).
    add('is_managed =', 'managed', filter.isManaged ? 1 : 0);
  }
  if (alias !== 'w' && (filter.submittedFrom !== undefined || filter.submittedBefore !== undefined)) {
    throw new Error(`Cannot filter the rollup "${alias}" by submitted_at: it has no times`);
  }
  if (filter.submittedFrom !== undefined) add('submitted_at >=', 'from', filter.submittedFrom);
  if (filter.submittedBefore !== undefined) add('submitted_at <', 'before', filter.submittedBefore);
  return { sql: terms.join(' AND '), params };
}

/**
 * The filter, restricted to rows strictly after the cursor in the list order. A row value comparison,
 * not an OR of two comparisons, so that both engines turn it into one range of the index.
 */
export function whereAfter(d: SqlDialect, filter: WorkloadFilter, after: Keyset | null): SqlWhere {
  if (after === null) return whereOf(d, filter);
  const before = filter.submittedBefore;
  // SQLite takes a single upper bound for the index range. With both end_date and a cursor, it would
  // keep `submitted_at < @before` and re-read every earlier page; one bound always implies the other,
  // so keep only the tighter one.
  if (before !== undefined && before <= after.submittedAt) return whereOf(d, filter);
  const where = whereOf(d, { ...filter, submittedBefore: undefined });
  return {
    sql: `${where.sql} AND (w.submitted_at, w.workload_id) < (@afterAt, @afterId)${d.cursorBound('w.submitted_at', '@afterAt')}`,
    params: { ...where.params, afterAt: after.submittedAt, afterId: after.workloadId },
  };
}
