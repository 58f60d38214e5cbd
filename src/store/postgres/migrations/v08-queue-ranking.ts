// Schema v8 on PostgreSQL: SQLite's migrations/v08-queue-ranking.ts, the queue columns of workload_totals filled from
// the rows, and the index of the waits that ended (on every month's partition). Writers wait from the
// lock to the commit: a row written between the fill and the commit would be missing from the new
// columns. A writer of an older release would not keep them, hence compatible_since 8
// (docs/scaling.md). Like every migration, this SQL never changes.
import { POSTGRES } from '../../sql/dialect.js';
import { QUEUE_DAY_MS, QUEUE_END, QUEUE_ENDED, queueIndexColumns } from '../../rollups/queue-columns.js';

const DAY = `(submitted_at / ${QUEUE_DAY_MS} - (submitted_at % ${QUEUE_DAY_MS} < 0)::int)`;
/** A wait that ended, in ms, floored at 0. */
const ENDED_WAIT_MS = `GREATEST(0, ${QUEUE_END} - submitted_at)`;

export const V8 = `
LOCK TABLE workloads IN SHARE ROW EXCLUSIVE MODE;
ALTER TABLE workload_totals ADD COLUMN waiting bigint NOT NULL DEFAULT 0, ADD COLUMN waiting_days bigint NOT NULL DEFAULT 0,
  ADD COLUMN queue_base_ms float8 NOT NULL DEFAULT 0;
UPDATE workload_totals AS r SET waiting = q.waiting, waiting_days = q.waiting_days, queue_base_ms = q.queue_base_ms
FROM (
  SELECT organization_id, initiative_id, status, instance_type,
    SUM((${QUEUE_END} IS NULL)::int) AS waiting,
    SUM(CASE WHEN ${QUEUE_END} IS NULL THEN ${DAY} ELSE 0 END) AS waiting_days,
    SUM(CASE WHEN ${QUEUE_END} IS NOT NULL THEN ${ENDED_WAIT_MS} ELSE ${DAY} * ${QUEUE_DAY_MS} - submitted_at END)::float8 AS queue_base_ms
  FROM workloads GROUP BY 1, 2, 3, 4
) AS q
WHERE (r.organization_id, r.initiative_id, r.status, r.instance_type) = (q.organization_id, q.initiative_id, q.status, q.instance_type);

CREATE INDEX workloads_queue_ended ON workloads (${queueIndexColumns(POSTGRES)}) WHERE ${QUEUE_ENDED};
`;
