// Schema v5: why failed and cancelled workloads did not complete (src/domain/failure-reason.ts), and
// the daily rollup that answers statistics grouped by it. Rows written before v5 get the reason their
// own row proves: cancelled → deleted, failed with a non-zero exit code → nonzero_exit, else unknown;
// the objects still in a cluster get their real reason when the next relist rewrites them. Like every
// migration, this SQL never changes once released (migrations.ts).
//
// No CHECK on the values: a later version may add reasons, and SQLite cannot change a column's
// CHECK without rebuilding the table. Readers map a reason they do not know to `unknown`.
import { laterDailyRollup } from './v03-rollups.js';

export const V5 = `
ALTER TABLE workloads ADD COLUMN failure_reason TEXT;

UPDATE workloads SET failure_reason = CASE
  WHEN status = 'cancelled' THEN 'deleted'
  WHEN exit_code IS NOT NULL AND exit_code <> 0 THEN 'nonzero_exit'
  ELSE 'unknown' END
WHERE status IN ('failed', 'cancelled');

${laterDailyRollup({
  table: 'stats_daily_failure_reason',
  keyColumn: 'failure_reason',
  keyValue: 'failure_reason',
  where: 'failure_reason IS NOT NULL',
  comment: 'Statistics grouped by failure reason, per day of submission: failed and cancelled workloads only.',
})}`;
