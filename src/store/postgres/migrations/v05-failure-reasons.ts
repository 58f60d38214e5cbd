// Released migrations' SQL never changes: databases already carry it (schema.ts).
import { DAILY_VALUES_V3, ROLLUPS, type RollupDefinition } from '../../rollups/definitions.js';
import { rollupFillSql } from '../rollup-rebuild.js';

// v5: why failed and cancelled workloads did not complete, and the daily rollup of statistics by it
// (SQLite's migrations/v05-failure-reasons.ts). Rows from before get the reason their own row proves; live objects get
// their real one at the next relist. Writers wait from the lock to the commit: a row written between
// the backfill and the commit would be missing from the new rollup. A writer of an older release
// keeps neither the column nor the rollup, hence compatible_since 5 (docs/scaling.md).
// Filled with the figures v5 created the table with: v7 added more (migrations/v07-queue-rollups.ts).
const FAILURE_REASON_ROLLUP: RollupDefinition = {
  ...(ROLLUPS.find((r) => r.table === 'stats_daily_failure_reason') as RollupDefinition),
  values: DAILY_VALUES_V3,
};

export const V5 = `
LOCK TABLE workloads IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE workloads ADD COLUMN failure_reason text COLLATE "C";

UPDATE workloads SET failure_reason = CASE
  WHEN status = 'cancelled' THEN 'deleted'
  WHEN exit_code IS NOT NULL AND exit_code <> 0 THEN 'nonzero_exit'
  ELSE 'unknown' END
WHERE status IN ('failed', 'cancelled');

-- Statistics grouped by failure reason, per day of submission: failed and cancelled workloads only.
CREATE TABLE stats_daily_failure_reason (
  organization_id  text   COLLATE "C" NOT NULL,
  day              bigint NOT NULL,
  initiative_id    text   COLLATE "C" NOT NULL,
  failure_reason   text   COLLATE "C" NOT NULL,
  workloads        bigint NOT NULL,
  completed        bigint NOT NULL,
  failed           bigint NOT NULL,
  started          bigint NOT NULL,
  open_started     bigint NOT NULL,
  duration_base_ms float8 NOT NULL,
  open_gpus        bigint NOT NULL,
  gpu_base_ms      float8 NOT NULL,
  PRIMARY KEY (organization_id, day, initiative_id, failure_reason)
);

${rollupFillSql(FAILURE_REASON_ROLLUP)};
`;
