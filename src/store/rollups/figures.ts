// What one workloads row adds to each rollup: the exact twin, in JS numbers, of figures() in
// migrations/v03-rollups.ts, of the queue columns' fills in migrations/v07-queue-rollups.ts and
// migrations/v08-queue-ranking.ts (and of workload_counts' n = 1). test/store/rollups/rollup-figures.test.ts compares
// the two on the edge cases: negative times, .5 roundings, pods that started after the completion.
//
// Every figure is an integer-valued number (GPU-ms, ms, counts, days) far below 2^53, so adding and
// subtracting them is exact in any order: a rollup row is exactly the sum over its rows, whichever
// batches brought them, and reaches exactly 0 when they are all gone.
import { weekStartDay } from '../../domain/trend-interval.js';
import type { RollupDefinition, RollupSource, RollupValueColumn } from './definitions.js';

export const DAY_MS = 86_400_000;

/**
 * UTC day of an epoch-ms time, rounded toward −∞: SQLite's `(s / D - (s % D < 0))`. Taken through
 * the remainder rather than Math.floor(s / D), so that no float division can round up to the next day.
 */
export function dayOf(ms: number): number {
  const remainder = ms % DAY_MS;
  return (ms - remainder) / DAY_MS - (remainder < 0 ? 1 : 0);
}

/** The day a row's figures are based at in `rollup`: its day of submission, or that week's Monday in a weekly rollup. */
export function anchorDayOf(rollup: Pick<RollupDefinition, 'period'>, day: number): number {
  return rollup.period === 'week' ? weekStartDay(day) : day;
}

const EXACT = 4_503_599_627_370_496; // 2^52: from here on every double is an integer

/**
 * SQLite's ROUND(x) (func.c roundFunc): half away from zero, by adding ±0.5 and truncating, in
 * doubles. Math.round differs at negative halves (−2.5 → −2, SQLite −3). `+ 0` turns −0 into 0.
 */
export function sqliteRound(x: number): number {
  if (x < -EXACT || x > EXACT) return x;
  return Math.trunc(x + (x < 0 ? -0.5 : 0.5)) + 0;
}

export type Figures = Record<RollupValueColumn, number>;

/**
 * The figures of one row: what it adds to the value columns of its rollup rows. A row still open
 * grows with the time of reading: its figures are based at `day` (its day of submission; a weekly
 * rollup's Monday), and a reader adds (t − day start) per open GPU, running or waiting row.
 */
export function figures(row: RollupSource, day: number = dayOf(row.submitted_at)): Figures {
  const finished = row.completed_at !== null;
  const started = row.started_at !== null;
  // gpu_seconds_closed − open_gpu_start_sum in whole GPU-ms: both are sums of gpus × ms / 1000.0
  // (REFRESH_AGGREGATES), so rounding them to ms gives back exact integers.
  const closedMinusStart = sqliteRound(row.gpu_seconds_closed * 1000) - sqliteRound(row.open_gpu_start_sum * 1000);
  let durationBaseMs = 0;
  if (row.started_at !== null) {
    durationBaseMs = row.completed_at !== null ? Math.max(0, row.completed_at - row.started_at) : day * DAY_MS - row.started_at;
  }
  // The queue ends at the start, or at the end of a workload that never started; a waiting one's
  // queue at t is queue_base_ms + (t − day start), like a running one's duration.
  const queueEnd = row.started_at ?? row.completed_at;
  const queueBaseMs = queueEnd !== null ? Math.max(0, queueEnd - row.submitted_at) : day * DAY_MS - row.submitted_at;
  return {
    n: 1,
    workloads: 1,
    completed: row.status === 'completed' ? 1 : 0,
    failed: row.status === 'failed' ? 1 : 0,
    started: started ? 1 : 0,
    open_started: !finished && started ? 1 : 0,
    duration_base_ms: durationBaseMs,
    open_gpus: finished ? 0 : row.open_gpus,
    // `+ 0`: 0 GPUs × a day before 1970 is −0 in doubles, 0 in SQLite's integers.
    open_gpu_days: finished ? 0 : row.open_gpus * day + 0,
    // A finished row: its GPU-ms at the completion, floored (the readers' gpuMsSql, workload-sql.ts).
    gpu_base_ms: row.completed_at !== null
      ? Math.max(0, closedMinusStart + row.open_gpus * row.completed_at)
      : closedMinusStart + row.open_gpus * day * DAY_MS,
    waiting: queueEnd === null ? 1 : 0,
    queue_base_ms: queueBaseMs,
    // `+ 0`: day −0 is 0 in SQLite's integers.
    waiting_days: queueEnd === null ? day + 0 : 0,
  };
}

export type RollupKey = readonly (string | number)[];

/** The key of the row's rollup row in `rollup`, in the order of its key columns. */
export function rollupKey(rollup: RollupDefinition, row: RollupSource): RollupKey {
  // failure_reason is a key only of the rollup that requires it (never NULL there).
  return rollup.keys.map((column) =>
    column === 'day'
      ? anchorDayOf(rollup, dayOf(row.submitted_at))
      : column === 'failure_reason' ? (row.failure_reason ?? '') : row[column]);
}
