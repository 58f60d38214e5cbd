// Schema v7: the queue figures of the daily rollups, for the average queue time of statistics and
// series (docs/api.md "Statistics"). Per rollup row, `waiting` counts the workloads neither started
// nor finished, and `queue_base_ms` sums their queue times as coefficients, as migrations/v03-rollups.ts holds
// durations: a workload that started waited until its start, one that finished unstarted until its
// end (both floored at 0), and a waiting one's queue at t is queue_base_ms + (t − day start).
// The columns are filled from the rows here; from then on the writer's deltas keep them
// (src/store/rollups/figures.ts). Like every migration, this SQL never changes once released.

import { QUEUE_DAILY_ROLLUPS, QUEUE_DAY_MS, QUEUE_END, type QueueDailyRollup } from '../../rollups/queue-columns.js';

const DAY = `(submitted_at / ${QUEUE_DAY_MS} - (submitted_at % ${QUEUE_DAY_MS} < 0))`;
/** A wait that ended, in ms, floored at 0. */
const ENDED_WAIT_MS = `MAX(0, ${QUEUE_END} - submitted_at)`;

const addQueueColumns = ({ table, key, where }: QueueDailyRollup) => `
ALTER TABLE ${table} ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ${table} ADD COLUMN queue_base_ms REAL NOT NULL DEFAULT 0;
UPDATE ${table} AS r SET (waiting, queue_base_ms) = (q.waiting, q.queue_base_ms)
FROM (
  SELECT organization_id, ${DAY} AS day, initiative_id, ${key} AS key,
    SUM(${QUEUE_END} IS NULL) AS waiting,
    TOTAL(CASE WHEN ${QUEUE_END} IS NOT NULL THEN ${ENDED_WAIT_MS} ELSE ${DAY} * ${QUEUE_DAY_MS} - submitted_at END) AS queue_base_ms
  FROM workloads ${where} GROUP BY 1, 2, 3, 4
) AS q
WHERE (r.organization_id, r.day, r.initiative_id, r.${key}) = (q.organization_id, q.day, q.initiative_id, q.key);
`;

export const V7 = QUEUE_DAILY_ROLLUPS.map(addQueueColumns).join('');
