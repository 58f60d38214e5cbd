// Schema v8 on PostgreSQL: SQLite's migration-v8.ts, the queue columns of workload_totals filled from
// the rows, and the index of the waits that ended (on every month's partition). Writers wait from the
// lock to the commit: a row written between the fill and the commit would be missing from the new
// columns. A writer of an older release would not keep them, hence compatible_since 8
// (docs/scaling.md). Like every migration, this SQL never changes.
import { POSTGRES } from '../common/dialect.js';
import { V8_DAY_MS, V8_QUEUE_END as QUEUE_END, V8_QUEUE_ENDED, v8QueueIndexColumns } from '../common/queue-ranking-v8.js';

const DAY = `(submitted_at / ${V8_DAY_MS} - (submitted_at % ${V8_DAY_MS} < 0)::int)`;

export const V8 = `
LOCK TABLE workloads IN SHARE ROW EXCLUSIVE MODE;
ALTER TABLE workload_totals ADD COLUMN waiting bigint NOT NULL DEFAULT 0, ADD COLUMN waiting_days bigint NOT NULL DEFAULT 0,
  ADD COLUMN queue_base_ms float8 NOT NULL DEFAULT 0;
UPDATE workload_totals AS r SET waiting = q.waiting, waiting_days = q.waiting_days, queue_base_ms = q.queue_base_ms
FROM (
  SELECT organization_id, initiative_id, status, instance_type,
    SUM((${QUEUE_END} IS NULL)::int) AS waiting,
    SUM(CASE WHEN ${QUEUE_END} IS NULL THEN ${DAY} ELSE 0 END) AS waiting_days,
    SUM(CASE WHEN ${QUEUE_END} IS NOT NULL THEN GREATEST(0, ${QUEUE_END} - submitted_at) ELSE ${DAY} * ${V8_DAY_MS} - submitted_at END)::float8 AS queue_base_ms
  FROM workloads GROUP BY 1, 2, 3, 4
) AS q
WHERE (r.organization_id, r.initiative_id, r.status, r.instance_type) = (q.organization_id, q.initiative_id, q.status, q.instance_type);

CREATE INDEX workloads_queue_ended ON workloads (${v8QueueIndexColumns(POSTGRES)}) WHERE ${V8_QUEUE_ENDED};
`;
