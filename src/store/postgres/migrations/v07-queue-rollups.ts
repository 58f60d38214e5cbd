// Schema v7 on PostgreSQL: SQLite's migrations/v07-queue-rollups.ts, the queue figures of the daily rollups, filled
// from the rows. Writers wait from the lock to the commit: a row written between the fill and the
// commit would be missing from the new columns. A writer of an older release would not keep the
// columns, hence compatible_since 7 (docs/scaling.md). Like every migration, this SQL never changes.

import { QUEUE_DAILY_ROLLUPS, QUEUE_DAY_MS, QUEUE_END, type QueueDailyRollup } from '../../rollups/queue-columns.js';

const DAY = `(submitted_at / ${QUEUE_DAY_MS} - (submitted_at % ${QUEUE_DAY_MS} < 0)::int)`;
/** A wait that ended, in ms, floored at 0. */
const ENDED_WAIT_MS = `GREATEST(0, ${QUEUE_END} - submitted_at)`;

const addQueueColumns = ({ table, key, where }: QueueDailyRollup) => `
ALTER TABLE ${table} ADD COLUMN waiting bigint NOT NULL DEFAULT 0, ADD COLUMN queue_base_ms float8 NOT NULL DEFAULT 0;
UPDATE ${table} AS r SET waiting = q.waiting, queue_base_ms = q.queue_base_ms
FROM (
  SELECT organization_id, ${DAY} AS day, initiative_id, ${key} AS key,
    SUM((${QUEUE_END} IS NULL)::int) AS waiting,
    SUM(CASE WHEN ${QUEUE_END} IS NOT NULL THEN ${ENDED_WAIT_MS} ELSE ${DAY} * ${QUEUE_DAY_MS} - submitted_at END)::float8 AS queue_base_ms
  FROM workloads ${where} GROUP BY 1, 2, 3, 4
) AS q
WHERE (r.organization_id, r.day, r.initiative_id, r.${key}) = (q.organization_id, q.day, q.initiative_id, q.key);
`;

export const V7 = `
LOCK TABLE workloads IN SHARE ROW EXCLUSIVE MODE;
${QUEUE_DAILY_ROLLUPS.map(addQueueColumns).join('')}`;
