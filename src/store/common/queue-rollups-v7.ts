// The daily rollups that schema v7 gives the queue columns (waiting, queue_base_ms), and the end of a
// workload's wait, as both backends' v7 migrations fill them (src/store/sqlite/migration-v7.ts,
// src/store/postgres/migration-v7.ts). Part of released migrations' SQL: never change them.

export const V7_DAILY_ROLLUPS = [
  { table: 'stats_daily_submitter', key: 'submitted_by', where: '' },
  { table: 'stats_daily_instance_type', key: 'instance_type', where: '' },
  { table: 'stats_daily_failure_reason', key: 'failure_reason', where: 'WHERE failure_reason IS NOT NULL' },
] as const;

export type V7DailyRollup = (typeof V7_DAILY_ROLLUPS)[number];

/** Where a workload's wait ends: its start, else the end of one that never started; NULL while it waits. */
export const V7_QUEUE_END = 'COALESCE(started_at, completed_at)';

export const V7_DAY_MS = 86_400_000;
