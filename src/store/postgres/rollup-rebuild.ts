// Recomputes the rollup tables from the rows, in one transaction: PostgreSQL's twin of the backfill of
// SQLite's schema v3 (src/store/sqlite/migrations/v03-rollups.ts). For `gpucap migrate`, which copies rows and
// then needs their rollups, and for tests that insert rows straight into the tables. Readers never see
// the tables empty: the old rows stay visible to them until the new ones commit.
//
// The figures are migrations/v03-rollups.ts's figures() and src/store/rollups/figures.ts's, in PostgreSQL's SQL:
// integers in bigint, GPU-ms and ms in doubles, never numeric (a SUM of a bigint is numeric, and is
// cast back by the INSERT into the rollup's bigint or float8 column, exactly: every sum is an integer
// below 2^53).
import { ROLLUPS, type RollupDefinition, type RollupKeyColumn, type RollupValueColumn } from '../rollups/definitions.js';
import { DAY_MS } from '../sql/rollup-sql.js';
import { USAGE_ROLLUPS, USAGE_VALUES, usageKeySql } from '../usage/usage-columns.js';
import { weekStartSql } from '../statistics/week-sql.js';
import { SCHEMA_LOCK_SQL } from './locks.js';
import { inTransaction, type Queryable } from './transaction.js';

/** Day of submission (UTC), a floor division: bigint `/` truncates toward 0, as SQLite's does. */
const DAY = `(submitted_at / ${DAY_MS} - (submitted_at % ${DAY_MS} < 0)::int)`;

/** gpu_seconds_closed − open_gpu_start_sum in whole GPU-ms (see figures.ts). */
const CLOSED_MINUS_START = '(ROUND(gpu_seconds_closed * 1000.0::float8) - ROUND(open_gpu_start_sum * 1000.0::float8))';

/** A key column's value for a row, `day` being the day the rollup bases its figures at. */
const keysAt = (day: string): Record<RollupKeyColumn, string> => ({
  organization_id: 'organization_id',
  initiative_id: 'initiative_id',
  status: 'status',
  submitted_by: 'submitted_by',
  is_managed: 'is_managed',
  instance_type: 'instance_type',
  failure_reason: 'failure_reason',
  day,
});

/** What one row adds to each value column, its open figures based at `day` (figures.ts). */
const figuresAt = (day: string): Record<RollupValueColumn, string> => ({
  n: '1',
  workloads: '1',
  completed: "(status = 'completed')::int",
  failed: "(status = 'failed')::int",
  started: '(started_at IS NOT NULL)::int',
  open_started: '(completed_at IS NULL AND started_at IS NOT NULL)::int',
  duration_base_ms:
    'CASE WHEN started_at IS NULL THEN 0 WHEN completed_at IS NOT NULL THEN GREATEST(0, completed_at - started_at) ' +
    `ELSE ${day} * ${DAY_MS} - started_at END`,
  open_gpus: 'CASE WHEN completed_at IS NOT NULL THEN 0 ELSE open_gpus END',
  // float8 since schema v12: + 0 turns no open GPUs on a day before 1970 (0 × −1 = −0) into the 0 the writer's deltas hold.
  open_gpu_days: `CASE WHEN completed_at IS NOT NULL THEN 0 ELSE open_gpus * ${day} + 0 END`,
  // A finished row: its GPU-ms at the completion, floored (the readers' gpuMsSql).
  gpu_base_ms:
    `CASE WHEN completed_at IS NOT NULL THEN GREATEST(0.0::float8, ${CLOSED_MINUS_START} + open_gpus * completed_at) ` +
    `ELSE ${CLOSED_MINUS_START} + open_gpus * ${day}::float8 * ${DAY_MS}.0::float8 END`,
  waiting: '(COALESCE(started_at, completed_at) IS NULL)::int',
  queue_base_ms:
    'CASE WHEN COALESCE(started_at, completed_at) IS NOT NULL THEN GREATEST(0, COALESCE(started_at, completed_at) - submitted_at) ' +
    `ELSE ${day} * ${DAY_MS} - submitted_at END`,
  waiting_days: `CASE WHEN COALESCE(started_at, completed_at) IS NULL THEN ${day} ELSE 0 END`,
});

/** The statements that rebuild every rollup table, usage's included (migrations/v06-usage.ts). */
export function rollupRebuildSql(): string[] {
  return [...ROLLUPS.flatMap((rollup) => [`DELETE FROM ${rollup.table}`, rollupFillSql(rollup)]), ...USAGE_REBUILD];
}

/** The day of the submission of workloads row `w` (UTC), as usage keys it. */
const ROW_DAY = `floor(w.submitted_at / ${DAY_MS}.0)::bigint`;

// Usage is counted at its workloads row's keys: set from the rows, then summed.
const USAGE_REBUILD = [
  `UPDATE workload_usage u SET organization_id = w.organization_id, day = ${ROW_DAY}, initiative_id = w.initiative_id,
     submitted_by = w.submitted_by, instance_type = w.instance_type, failure_reason = COALESCE(w.failure_reason, '')
   FROM workload_keys k JOIN workloads w ON w.workload_id = k.workload_id AND w.submitted_at = k.submitted_at
   WHERE k.workload_id = u.workload_id`,
  ...USAGE_ROLLUPS.flatMap((rollup) => {
    const keys = rollup.keys.map((k) => usageKeySql(rollup, k, k)).join(', ');
    const sums = USAGE_VALUES.map((v) => `SUM(${v})`).join(', ');
    return [
      `DELETE FROM ${rollup.table}`,
      `INSERT INTO ${rollup.table} (${rollup.keys.join(', ')}, ${USAGE_VALUES.join(', ')})
     SELECT ${keys}, ${sums} FROM workload_usage
     WHERE day IS NOT NULL GROUP BY ${rollup.keys.map((_, i) => i + 1).join(', ')}`,
    ];
  }),
];

/** The statement that fills an empty rollup table with the sums over the workloads rows. */
export function rollupFillSql(rollup: RollupDefinition): string {
  const day = rollup.period === 'week' ? weekStartSql(DAY) : DAY;
  const keysOf = keysAt(day);
  const figures = figuresAt(day);
  const keys = rollup.keys.map((k) => keysOf[k]);
  const groups = rollup.keys.map((_, i) => String(i + 1)).join(', ');
  const where = rollup.requires === undefined ? '' : ` WHERE ${rollup.requires} IS NOT NULL`;
  return `INSERT INTO ${rollup.table} (${[...rollup.keys, ...rollup.values].join(', ')})
       SELECT ${[...keys, ...rollup.values.map((v) => `SUM(${figures[v]})`)].join(', ')}
       FROM workloads${where} GROUP BY ${groups}`;
}

/**
 * Replaces the contents of every rollup table with the sums over the workloads rows, in one
 * transaction on `client` (a dedicated connection, not in a transaction). Writers must not write
 * meanwhile: the schema lock keeps maintenance out, and `gpucap migrate` runs before any writer.
 */
export async function rebuildRollups(client: Queryable): Promise<void> {
  await inTransaction(client, async () => {
    await client.query(SCHEMA_LOCK_SQL);
    for (const sql of rollupRebuildSql()) await client.query(sql);
  });
}
