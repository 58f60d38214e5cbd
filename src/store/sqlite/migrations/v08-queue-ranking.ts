// Schema v8: what the queue ranking (sort_by=queue_seconds) reads. workload_totals gains the queue
// figures the daily rollups got in v7 (migrations/v07-queue-rollups.ts), plus `waiting_days`: without a day key, a
// waiting workload's queue at t is queue_base_ms + t − waiting_days × 1 day, summed exactly in 64-bit
// integers as open_gpu_days does for GPU-ms. The columns are filled from the rows here; from then on
// the writer's deltas keep them (src/store/rollups/figures.ts). workloads_queue_ended holds the waits
// that ended, which never change, in order per (initiative, status): each pair's top is a short walk.
// Like every migration, this SQL never changes once released.
import { SQLITE } from '../../sql/dialect.js';
import { QUEUE_DAY_MS, QUEUE_END, QUEUE_ENDED, queueIndexColumns } from '../../rollups/queue-columns.js';

const DAY = `(submitted_at / ${QUEUE_DAY_MS} - (submitted_at % ${QUEUE_DAY_MS} < 0))`;
/** A wait that ended, in ms, floored at 0. */
const ENDED_WAIT_MS = `MAX(0, ${QUEUE_END} - submitted_at)`;

export const V8 = `
ALTER TABLE workload_totals ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workload_totals ADD COLUMN waiting_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workload_totals ADD COLUMN queue_base_ms REAL NOT NULL DEFAULT 0;
UPDATE workload_totals AS r SET (waiting, waiting_days, queue_base_ms) = (q.waiting, q.waiting_days, q.queue_base_ms)
FROM (
  SELECT organization_id, initiative_id, status, instance_type,
    SUM(${QUEUE_END} IS NULL) AS waiting,
    SUM(CASE WHEN ${QUEUE_END} IS NULL THEN ${DAY} ELSE 0 END) AS waiting_days,
    TOTAL(CASE WHEN ${QUEUE_END} IS NOT NULL THEN ${ENDED_WAIT_MS} ELSE ${DAY} * ${QUEUE_DAY_MS} - submitted_at END) AS queue_base_ms
  FROM workloads GROUP BY 1, 2, 3, 4
) AS q
WHERE (r.organization_id, r.initiative_id, r.status, r.instance_type) = (q.organization_id, q.initiative_id, q.status, q.instance_type);

CREATE INDEX workloads_queue_ended ON workloads (${queueIndexColumns(SQLITE)}) WHERE ${QUEUE_ENDED};
`;
