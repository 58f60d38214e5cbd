// What schema v8 adds for the queue ranking, as both backends' v8 migrations create and fill it
// (src/store/sqlite/migration-v8.ts, src/store/postgres/migration-v8.ts): the queue columns of
// workload_totals, and the partial index of the waits that ended. Part of released migrations'
// SQL: never change them.
import type { SqlDialect } from './dialect.js';

/** Where a workload's wait ends: its start, else the end of one that never started; NULL while it waits. */
export const V8_QUEUE_END = 'COALESCE(started_at, completed_at)';

export const V8_DAY_MS = 86_400_000;

/** The rows of workloads_queue_ended: those whose wait ended. */
export const V8_QUEUE_ENDED = '(started_at IS NOT NULL OR completed_at IS NOT NULL)';

/** A wait that ended, in ms, floored at 0: the indexed expression of workloads_queue_ended. */
export const v8EndedWaitSql = (d: Pick<SqlDialect, 'greatest'>): string => d.greatest('0', `${V8_QUEUE_END} - submitted_at`);

/** The columns of workloads_queue_ended: the ranking walks each (initiative, status) from either end. */
export const v8QueueIndexColumns = (d: Pick<SqlDialect, 'greatest'>): string =>
  `organization_id, initiative_id, status, (${v8EndedWaitSql(d)}), workload_id`;
