// Schema v3: rollups that answer statistics, the GPU-hours ranking, list counts and capacity of
// period `total` without scanning the rows, and the indexes that keep the few rows they cannot
// answer at hand. Like every migration, the SQL built here must never change once released
// (migrations.ts): the helpers below exist to write it, not to be reused or edited.
//
// Every figure of a workload is linear in the time of reading while it is unfinished, so a rollup
// holds it as coefficients (docs/performance.md, "Statistics over last_30_days"), measured from the
// start of the row's submission day so that they stay small:
//   GPU-ms at t   = gpu_base_ms + open_gpus·(t − day start)        (t in ms)
//   duration at t = duration_base_ms + open_started·(t − day start)
// A finished workload is read at its completion, so it adds only to the bases. The readers add the
// per-workload floors (MAX(0, …)) back for the rare unfinished rows that are below 0 at the time of
// reading (workloads_unfinished_horizon).
//
// Each row adds integer-valued numbers (GPU-ms, ms, counts): adding a row and later subtracting it
// again is exact in SQLite's 64-bit floats (below 2^53), so the rollups never drift however often
// running workloads are rewritten, and a group whose rows are all gone sums to exactly 0. REAL
// columns rather than INTEGER for the sums: an absurd input then loses precision instead of
// overflowing and failing the write.
//
// Writes pay for the triggers (measured by a prototype since removed, bench/prototypes/write-cost.ts
// in git history): one trigger program per rollup and event, the fewest columns that give the
// figures, and no table that a read can get from another.

const DAY_MS = 86_400_000;

/** Day of submission (UTC), a floor division: SQLite's `/` truncates toward 0. */
const day = (p: string) => `(${p}submitted_at / ${DAY_MS} - (${p}submitted_at % ${DAY_MS} < 0))`;

type Columns = Record<string, string>;

/**
 * gpu_seconds_closed − open_gpu_start_sum in whole GPU-ms. Both aggregates are sums of
 * gpus × (ms time) / 1000.0 (REFRESH_AGGREGATES), so rounding them to ms gives back the exact
 * integers; every further step is then exact integer arithmetic.
 */
const closedMinusStart = (p: string) => `(ROUND(${p}gpu_seconds_closed * 1000.0) - ROUND(${p}open_gpu_start_sum * 1000.0))`;

/** What one row (`p` = 'NEW.', 'OLD.' or '') adds to each column of a rollup. */
function figures(p: string): Columns {
  const finished = `${p}completed_at IS NOT NULL`;
  return {
    workloads: '1',
    completed: `(${p}status = 'completed')`,
    failed: `(${p}status = 'failed')`,
    started: `(${p}started_at IS NOT NULL)`,
    open_started: `(${p}completed_at IS NULL AND ${p}started_at IS NOT NULL)`,
    duration_base_ms:
      `(CASE WHEN ${p}started_at IS NULL THEN 0 WHEN ${finished} THEN MAX(0, ${p}completed_at - ${p}started_at) ` +
      `ELSE ${day(p)} * ${DAY_MS} - ${p}started_at END)`,
    open_gpus: `(CASE WHEN ${finished} THEN 0 ELSE ${p}open_gpus END)`,
    open_gpu_days: `(CASE WHEN ${finished} THEN 0 ELSE ${p}open_gpus * ${day(p)} END)`,
    // A finished row: its GPU-ms at the completion, floored (the readers' gpuMsSql, workload-sql.ts).
    gpu_base_ms:
      `(CASE WHEN ${finished} THEN MAX(0.0, ${closedMinusStart(p)} + ${p}open_gpus * ${p}completed_at) ` +
      `ELSE ${closedMinusStart(p)} + ${p}open_gpus * ${day(p)} * ${DAY_MS}.0 END)`,
  };
}

const COLUMN_TYPES: Record<string, string> = {
  workloads: 'INTEGER', completed: 'INTEGER', failed: 'INTEGER', started: 'INTEGER', open_started: 'INTEGER',
  duration_base_ms: 'REAL', open_gpus: 'INTEGER', open_gpu_days: 'INTEGER', gpu_base_ms: 'REAL',
};

interface Rollup {
  table: string;
  /** Primary key: column name → the row's value (`p` prefix). */
  key: (p: string) => Columns;
  values: readonly string[];
  /** Columns of workloads that key and values read: an update of any of them may change the rollup. */
  reads: readonly string[];
  comment: string;
}

const GPU_COLUMNS = ['completed_at', 'gpu_seconds_closed', 'open_gpus', 'open_gpu_start_sum'];
const DAILY_VALUES = ['workloads', 'completed', 'failed', 'started', 'open_started', 'duration_base_ms', 'open_gpus', 'gpu_base_ms'];

const ROLLUPS: readonly Rollup[] = [
  {
    table: 'stats_daily_submitter',
    key: (p) => ({
      organization_id: `${p}organization_id`,
      day: day(p),
      initiative_id: `${p}initiative_id`,
      submitted_by: `${p}submitted_by`,
    }),
    values: DAILY_VALUES,
    reads: ['organization_id', 'submitted_at', 'initiative_id', 'submitted_by', 'status', 'started_at', ...GPU_COLUMNS],
    comment: 'Statistics grouped by submitter, per day of submission. The initiative serves team scopes.',
  },
  {
    table: 'stats_daily_instance_type',
    key: (p) => ({
      organization_id: `${p}organization_id`,
      day: day(p),
      initiative_id: `${p}initiative_id`,
      instance_type: `${p}instance_type`,
    }),
    values: DAILY_VALUES,
    reads: ['organization_id', 'submitted_at', 'initiative_id', 'instance_type', 'status', 'started_at', ...GPU_COLUMNS],
    comment: 'Statistics grouped by instance type or by initiative (summed over types) and the summary, per day of submission.',
  },
  {
    table: 'workload_totals',
    key: (p) => ({
      organization_id: `${p}organization_id`,
      initiative_id: `${p}initiative_id`,
      status: `${p}status`,
      instance_type: `${p}instance_type`,
    }),
    values: ['workloads', 'open_gpus', 'open_gpu_days', 'gpu_base_ms'],
    reads: ['organization_id', 'initiative_id', 'status', 'instance_type', 'submitted_at', ...GPU_COLUMNS],
    comment:
      "Every workload ever, without the submitter: the list's total_count (hundreds of rows where workload_counts has " +
      "thousands), the GPU-hours ranking's count and average, and capacity used since ever (period `total`).",
  },
];

const list = (items: readonly string[]) => items.join(', ');
const keyColumns = (rollup: Rollup) => Object.keys(rollup.key(''));
const keyValues = (rollup: Rollup, p: string) => list(Object.values(rollup.key(p)));
const sumOf = (v: string) => (COLUMN_TYPES[v] === 'INTEGER' ? 'SUM' : 'TOTAL');

function createTable(rollup: Rollup): string {
  const columns = [
    ...keyColumns(rollup).map((k) => `  ${k} ${k === 'day' ? 'INTEGER' : 'TEXT'} NOT NULL,`),
    ...rollup.values.map((v) => `  ${v} ${COLUMN_TYPES[v] ?? 'REAL'} NOT NULL,`),
  ];
  return `-- ${rollup.comment}
CREATE TABLE ${rollup.table} (
${columns.join('\n')}
  PRIMARY KEY (${list(keyColumns(rollup))})
) STRICT, WITHOUT ROWID;
`;
}

function backfill(rollup: Rollup, where?: string): string {
  const add = figures('');
  return `INSERT INTO ${rollup.table} (${list([...keyColumns(rollup), ...rollup.values])})
SELECT ${list([keyValues(rollup, ''), ...rollup.values.map((v) => `${sumOf(v)}(${add[v] ?? ''})`)])}
FROM workloads${where === undefined ? '' : ` WHERE ${where}`} GROUP BY ${list(keyColumns(rollup).map((_, i) => String(i + 1)))};
`;
}

/** Adds row `p` (NEW.) to its rollup row, creating it; `where` guards the statement inside a trigger. */
function upsert(rollup: Rollup, p: string, where = 'true'): string {
  const add = figures(p);
  return `  INSERT INTO ${rollup.table} (${list([...keyColumns(rollup), ...rollup.values])})
  SELECT ${list([keyValues(rollup, p), ...rollup.values.map((v) => add[v] ?? '')])} WHERE ${where}
  ON CONFLICT DO UPDATE SET ${list(rollup.values.map((v) => `${v} = ${v} + excluded.${v}`))};`;
}

/** Takes row `p` (OLD.) out of its rollup row. */
function subtract(rollup: Rollup, p: string, where = 'true'): string {
  const old = figures(p);
  return `  UPDATE ${rollup.table} SET ${list(rollup.values.map((v) => `${v} = ${v} - ${old[v] ?? ''}`))}
  WHERE (${list(keyColumns(rollup))}) = (${keyValues(rollup, p)}) AND ${where};`;
}

// Per rollup, one trigger program for every update: a rewrite that keeps the row in its rollup row
// adds the difference (the common case), one that moves it takes it out and puts it in again. The
// guards name only OLD and NEW, so SQLite decides them once, before touching the table.
function updateTrigger(rollup: Rollup): string {
  const neu = figures('NEW.');
  const old = figures('OLD.');
  const same = `(${keyValues(rollup, 'OLD.')}) IS (${keyValues(rollup, 'NEW.')})`;
  const moved = `(${keyValues(rollup, 'OLD.')}) IS NOT (${keyValues(rollup, 'NEW.')})`;
  const changing = rollup.values.filter((v) => v !== 'workloads');
  return `
CREATE TRIGGER ${rollup.table}_update AFTER UPDATE OF ${list(rollup.reads)} ON workloads
WHEN (${list(rollup.reads.map((c) => `OLD.${c}`))}) IS NOT (${list(rollup.reads.map((c) => `NEW.${c}`))})
BEGIN
  UPDATE ${rollup.table} SET ${list(changing.map((v) => `${v} = ${v} + (${neu[v] ?? ''} - ${old[v] ?? ''})`))}
  WHERE (${list(keyColumns(rollup))}) = (${keyValues(rollup, 'NEW.')}) AND ${same};
${subtract(rollup, 'OLD.', moved)}
${upsert(rollup, 'NEW.', moved)}
END;
`;
}

function triggers(): string {
  return `
CREATE TRIGGER workloads_rollups_insert AFTER INSERT ON workloads BEGIN
${ROLLUPS.map((r) => upsert(r, 'NEW.')).join('\n')}
END;

CREATE TRIGGER workloads_rollups_delete AFTER DELETE ON workloads BEGIN
${ROLLUPS.map((r) => subtract(r, 'OLD.')).join('\n')}
END;
${ROLLUPS.map(updateTrigger).join('')}`;
}

/** When an unfinished row's GPU-seconds cross 0: part of workloads_unfinished_horizon's expression. */
const GPU_SECONDS_CROSS_ZERO =
  'CASE WHEN open_gpus > 0 THEN (open_gpu_start_sum - gpu_seconds_closed) * 1000.0 / open_gpus ' +
  'WHEN open_gpu_start_sum > gpu_seconds_closed THEN 1e18 ELSE 0 END';

// The time (epoch ms) from which an unfinished row's figures are all ≥ 0: its start, and the time its
// GPU-seconds cross 0 (open_start − closed)/open_gpus, after the start of every open pod. Before it,
// the floors MAX(0, …) of the raw figures apply and the linear rollups read too little; the readers
// find those rows by this index (none, unless a pod started after the time of reading) and add the
// difference. It also covers every column the GPU-hours ranking reads of unfinished rows.
export const GPU_INDEXES_V3 = `
CREATE INDEX workloads_unfinished_horizon ON workloads (
  organization_id,
  MAX(COALESCE(started_at, 0), ${GPU_SECONDS_CROSS_ZERO}),
  initiative_id, status, submitted_at, submitted_by, instance_type, workload_id,
  started_at, completed_at, gpu_seconds_closed, open_gpus, open_gpu_start_sum)
WHERE completed_at IS NULL;

-- Finished workloads by their GPU-hours, which no longer change: the top of the ranking per
-- (initiative, status) is a short walk from either end.
CREATE INDEX workloads_finished_gpu_hours ON workloads (
  organization_id, initiative_id, status,
  (MAX(0.0, gpu_seconds_closed + open_gpus * (completed_at / 1000.0) - open_gpu_start_sum) / 3600.0),
  workload_id)
WHERE completed_at IS NOT NULL;

-- Finished workloads that still hold open pods (their pods outlived them): the only finished ones
-- whose pods can reach past a reading time before it, for capacity since ever. Normally empty.
CREATE INDEX workloads_finished_open ON workloads (organization_id, workload_id) WHERE completed_at IS NOT NULL AND open_gpus > 0;
`;

export const V3 = [...ROLLUPS.map((r) => createTable(r) + backfill(r)), GPU_INDEXES_V3, triggers()].join('\n');

/**
 * A daily rollup of a later version, created and filled as v3 created and filled its own: the same
 * figures, so that the writer's per-batch deltas (src/store/rollups/) keep it exact from there on.
 * `keyColumn` is the key's last column after (organization_id, day, initiative_id), with its value;
 * `where` keeps only some rows.
 */
export function laterDailyRollup(spec: { table: string; keyColumn: string; keyValue: string; where?: string; comment: string }): string {
  const rollup: Rollup = {
    table: spec.table,
    key: (p) => ({
      organization_id: `${p}organization_id`,
      day: day(p),
      initiative_id: `${p}initiative_id`,
      [spec.keyColumn]: spec.keyValue,
    }),
    values: DAILY_VALUES,
    reads: [],
    comment: spec.comment,
  };
  return createTable(rollup) + backfill(rollup, spec.where);
}
