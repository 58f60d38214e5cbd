// The queue figures' SQL that both backends' migrations wrote, and that the queue ranking reads word
// for word: the daily rollups that schema 7 gave the queue columns (waiting, queue_base_ms), the
// queue columns of workload_totals and the partial index of the waits that ended (schema 8). Part of
// released migrations' SQL (src/store/sqlite/migrations/, src/store/postgres/migrations/): never
// change them.
import type { SqlDialect } from '../sql/dialect.js';

/** Where a workload's wait ends: its start, else the end of one that never started; NULL while it waits. */
export const QUEUE_END = 'COALESCE(started_at, completed_at)';

export const QUEUE_DAY_MS = 86_400_000;

/** The daily rollups that schema 7 gave the queue columns. */
export const QUEUE_DAILY_ROLLUPS = [
  { table: 'stats_daily_submitter', key: 'submitted_by', where: '' },
  { table: 'stats_daily_instance_type', key: 'instance_type', where: '' },
  { table: 'stats_daily_failure_reason', key: 'failure_reason', where: 'WHERE failure_reason IS NOT NULL' },
] as const;

export type QueueDailyRollup = (typeof QUEUE_DAILY_ROLLUPS)[number];

/** The rows of workloads_queue_ended: those whose wait ended. */
export const QUEUE_ENDED = '(started_at IS NOT NULL OR completed_at IS NOT NULL)';

/** A wait that ended, in ms, floored at 0: the indexed expression of workloads_queue_ended. */
export const endedWaitSql = (d: Pick<SqlDialect, 'greatest'>): string => d.greatest('0', `${QUEUE_END} - submitted_at`);

/** The columns of workloads_queue_ended: the ranking walks each (initiative, status) from either end. */
export const queueIndexColumns = (d: Pick<SqlDialect, 'greatest'>): string =>
  `organization_id, initiative_id, status, (${endedWaitSql(d)}), workload_id`;
