// Reading the rollups (SQLite schema v3, src/store/sqlite/migrations/v03-rollups.ts; PostgreSQL schema v1): their
// figures at a time of reading, and the rows whose floors the rollups cannot hold. Every figure here
// is in whole ms or GPU-ms, so sums over rollups and over rows are exact and agree to the last bit
// (gpuMsAt in workload-sql.ts).
import type { WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from './dialect.js';
import { gpuMsAt } from './workload-sql.js';

export const DAY_MS = 86_400_000;

/**
 * Whether the rollups answer the filter: they hold the organization and the initiative (scope and
 * filter), plus what `also` names (submission times: the daily rollups; status: workload_totals),
 * never the submitter or is_managed. A scope without teams is left to the query over the rows,
 * which decides it before any read.
 */
export function rollupsHold(filter: WorkloadFilter, also: { times?: boolean; status?: boolean } = {}): boolean {
  if (filter.scope.initiatives?.length === 0) return false;
  const timed = filter.submittedFrom !== undefined || filter.submittedBefore !== undefined;
  return filter.submittedBy === undefined && filter.isManaged === undefined &&
    (also.status === true || filter.status === undefined) && (also.times === true || !timed);
}

/** GPU-ms at @now of a daily rollup row `r` (stats_daily_*). */
export const dailyGpuMs = (d: SqlDialect): string => `(r.gpu_base_ms + r.open_gpus * (@now - r.day * ${d.float(`${DAY_MS}.0`)}))`;

/** Milliseconds run at @now by the started workloads of a daily rollup row `r`. */
export const dailyDurationMs = (d: SqlDialect): string =>
  `(r.duration_base_ms + r.open_started * (@now - r.day * ${d.float(`${DAY_MS}.0`)}))`;

/** Milliseconds waited at @now by the workloads of a daily rollup row `r` (schema v7). */
export const dailyQueueMs = (d: SqlDialect): string => `(r.queue_base_ms + r.waiting * (@now - r.day * ${d.float(`${DAY_MS}.0`)}))`;

/**
 * A row's wait as the rollups hold it, linear in `now` while it waits: what a raw part adds. The
 * floor at 0 of a row submitted after `now` comes from the rows of STILL_WAITING.
 */
export const linearQueueMs = (d: SqlDialect, now: string): string =>
  `(CASE WHEN COALESCE(w.started_at, w.completed_at) IS NULL THEN ${now} - w.submitted_at ` +
  `ELSE ${d.greatest('0', 'COALESCE(w.started_at, w.completed_at) - w.submitted_at')} END)`;

/**
 * With submitted_at after the time of reading (clock skew), the rows still waiting are the only ones
 * whose wait reads below 0. Normally there are none.
 */
export const STILL_WAITING = 'w.started_at IS NULL AND w.completed_at IS NULL';

/**
 * GPU-ms at `now` of a workload_totals row under `alias`. Its open_gpus × now is far beyond 2^53 in
 * GPU-ms, so that part is taken in 64-bit integers.
 */
export const totalsGpuMs = (d: SqlDialect, alias: string, now: string): string =>
  `(${alias}.gpu_base_ms + (${alias}.open_gpus * ${d.int(now)} - ${alias}.open_gpu_days * ${DAY_MS}))`;

/** What an unfinished row adds to a rollup at `now`: its GPU-ms before the floor. */
export const openGpuMs = (d: SqlDialect, now: string): string => gpuMsAt(d, now);

/**
 * From this time on, an unfinished row of `w`'s figures are all ≥ 0. It is the expression of the
 * index workloads_unfinished_horizon, word for word (`w.` aside): SQLite matches indexed expressions
 * by their text, PostgreSQL by their parse tree (test/store/postgres/reads-plans.test.ts checks both
 * schemas hold this very text).
 */
export const horizonSql = (d: SqlDialect): string =>
  d.greatest(
    'COALESCE(w.started_at, 0)',
    `CASE WHEN w.open_gpus > 0 THEN (w.open_gpu_start_sum - w.gpu_seconds_closed) * ${d.float('1000.0')} / w.open_gpus ` +
      `WHEN w.open_gpu_start_sum > w.gpu_seconds_closed THEN ${d.float('1e18')} ELSE 0 END`,
  );

/**
 * Unfinished rows that may read below 0 at `now` (a pod that started after it, or float residue
 * right at a start): the horizon is computed in floating point, so a second of slack keeps every
 * row whose exact figures could be negative. Normally none; an index range finds them.
 */
export const belowZeroAt = (d: SqlDialect, now: string): string => `w.completed_at IS NULL AND ${horizonSql(d)} > ${now} - 1000`;

export const HORIZON_INDEX = 'workloads_unfinished_horizon';

/** What the floors (at 0) add to the linear GPU-ms of an unfinished row at `now`. */
export const gpuMsFloorAt = (d: SqlDialect, now: string): string => `(${d.greatest(d.float('0.0'), gpuMsAt(d, now))} - ${gpuMsAt(d, now)})`;

/** What the floor (at 0) adds to the linear duration of an unfinished row at `now`. */
export const durationMsFloorAt = (d: SqlDialect, now: string): string =>
  `(CASE WHEN w.started_at IS NULL THEN 0 ELSE ${d.greatest('0', `${now} - w.started_at`)} - (${now} - w.started_at) END)`;
