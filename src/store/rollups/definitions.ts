// The rollup tables of the index, as both backends declare them: SQLite's workload_counts (schema v1), the
// three tables of schema v3 (migrations/v03-rollups.ts) and the failure reasons' of v5
// (migrations/v05-failure-reasons.ts), with the queue columns v7 added to the daily ones
// (migrations/v07-queue-rollups.ts) and v8 to workload_totals (migrations/v08-queue-ranking.ts), the
// initiatives' daily rollup of v10 (migrations/v10-initiative-rollups.ts), the submitters' weekly one of v11
// (migrations/v11-weekly-submitter-rollups.ts), and PostgreSQL's twins of them. Names and column order are
// SQLite's, word for word; test/store/rollups/rollup-definitions.test.ts reads them back from a migrated file. Each
// rollup row is the sum of figures.ts over the workloads rows of its key.

/** The columns of a workloads row that the keys and figures read: what a writer reads before and after a write. */
export const ROLLUP_SOURCE_COLUMNS = [
  'organization_id', 'initiative_id', 'status', 'submitted_by', 'is_managed', 'instance_type',
  'submitted_at', 'started_at', 'completed_at', 'gpu_seconds_closed', 'open_gpus', 'open_gpu_start_sum', 'failure_reason',
] as const;

/** Those columns of one workloads row, as a driver returns them (times in epoch ms, is_managed 0 or 1). */
export interface RollupSource {
  organization_id: string;
  initiative_id: string;
  status: string;
  submitted_by: string;
  is_managed: number;
  instance_type: string;
  submitted_at: number;
  started_at: number | null;
  completed_at: number | null;
  gpu_seconds_closed: number;
  open_gpus: number;
  open_gpu_start_sum: number;
  failure_reason: string | null;
}

/**
 * A key column: a text or flag column of the row, or `day`, the UTC day of submission (figures.ts);
 * in a weekly rollup, the Monday of that day's week.
 */
export type RollupKeyColumn =
  | 'organization_id' | 'initiative_id' | 'status' | 'submitted_by' | 'is_managed' | 'instance_type' | 'failure_reason' | 'day';

export const ROLLUP_VALUE_COLUMNS = [
  'n', 'workloads', 'completed', 'failed', 'started', 'open_started', 'duration_base_ms', 'open_gpus', 'open_gpu_days', 'gpu_base_ms',
  'waiting', 'queue_base_ms', 'waiting_days',
] as const;
export type RollupValueColumn = (typeof ROLLUP_VALUE_COLUMNS)[number];

/** How a column is stored: SQLite TEXT / INTEGER / REAL, PostgreSQL text / bigint (smallint for is_managed) / float8. */
export type RollupColumnType = 'text' | 'integer' | 'real';

export const ROLLUP_COLUMN_TYPES: Readonly<Record<RollupKeyColumn | RollupValueColumn, RollupColumnType>> = {
  organization_id: 'text', initiative_id: 'text', status: 'text', submitted_by: 'text', instance_type: 'text', failure_reason: 'text',
  is_managed: 'integer', day: 'integer',
  n: 'integer', workloads: 'integer', completed: 'integer', failed: 'integer', started: 'integer', open_started: 'integer',
  open_gpus: 'real', open_gpu_days: 'real', duration_base_ms: 'real', gpu_base_ms: 'real',
  waiting: 'integer', queue_base_ms: 'real', waiting_days: 'integer',
};

export type RollupTable =
  | 'workload_counts' | 'stats_daily_submitter' | 'stats_daily_instance_type' | 'workload_totals' | 'stats_daily_failure_reason'
  | 'stats_daily_initiative' | 'stats_weekly_submitter';

export interface RollupDefinition {
  readonly table: RollupTable;
  /** The primary key, in the table's column order. */
  readonly keys: readonly RollupKeyColumn[];
  /** The summed columns, in the table's column order after the keys. */
  readonly values: readonly RollupValueColumn[];
  /** Only the rows where this column is not NULL are in the rollup (the others cost its writes nothing). */
  readonly requires?: 'failure_reason';
  /** 'week': `day` holds the Monday of the week of submission, and the figures are based at it (figures.ts). */
  readonly period?: 'week';
}

/** The daily rollups' figures as schema v3 and v5 created them; v7 added the queue's (migrations/v07-queue-rollups.ts). */
export const DAILY_VALUES_V3: readonly RollupValueColumn[] = [
  'workloads', 'completed', 'failed', 'started', 'open_started', 'duration_base_ms', 'open_gpus', 'gpu_base_ms',
];

/** The queue figures of schema v7: the workloads still waiting, and the base of their queue time. */
export const QUEUE_VALUES: readonly RollupValueColumn[] = ['waiting', 'queue_base_ms'];

const DAILY_VALUES: readonly RollupValueColumn[] = [...DAILY_VALUES_V3, ...QUEUE_VALUES];

/** Every rollup, in the order writers apply them (on PostgreSQL, the order its row locks are taken in). */
export const ROLLUPS: readonly RollupDefinition[] = [
  // total_count of a list without dates.
  { table: 'workload_counts', keys: ['organization_id', 'initiative_id', 'status', 'submitted_by', 'is_managed'], values: ['n'] },
  // Statistics by submitter per day of submission; the initiative serves team scopes.
  { table: 'stats_daily_submitter', keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'], values: DAILY_VALUES },
  // Statistics by instance type or initiative, and the summary, per day of submission.
  { table: 'stats_daily_instance_type', keys: ['organization_id', 'day', 'initiative_id', 'instance_type'], values: DAILY_VALUES },
  // Every workload ever without the submitter: total_count, the GPU-hours and queue rankings, capacity
  // since ever. Without a day, a waiting row's queue at t is queue_base_ms + t − waiting_days × 1 day.
  {
    table: 'workload_totals',
    keys: ['organization_id', 'initiative_id', 'status', 'instance_type'],
    values: ['workloads', 'open_gpus', 'open_gpu_days', 'gpu_base_ms', 'waiting', 'waiting_days', 'queue_base_ms'],
  },
  // Statistics by failure reason per day of submission (schema v5): failed and cancelled rows only,
  // the others being the summary minus these (stats-rollup.ts). Most rows never fail, so most writes
  // leave this table alone.
  {
    table: 'stats_daily_failure_reason',
    keys: ['organization_id', 'day', 'initiative_id', 'failure_reason'],
    values: DAILY_VALUES,
    requires: 'failure_reason',
  },
  // The summary and statistics by initiative per day of submission (schema v10): the instance-type
  // rollup summed over its types, a few times fewer rows for the reads that do not group by type.
  { table: 'stats_daily_initiative', keys: ['organization_id', 'day', 'initiative_id'], values: DAILY_VALUES },
  // Statistics by submitter per week of submission (schema v11): a day has a row per team and user,
  // so a month by submitter read 30 of them per user; whole weeks come from here, the days at the
  // edges from the daily rollup (week-window.ts).
  {
    table: 'stats_weekly_submitter',
    keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'],
    values: DAILY_VALUES,
    period: 'week',
  },
];
