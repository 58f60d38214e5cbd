// Schema v10: the daily rollups that the summary and the statistics and series by initiative read.
// They grouped stats_daily_instance_type and stats_daily_usage, which also hold a row per instance
// type (and, for usage, per failure reason): at 1M workloads, 16k rows for one organization's 30
// days, regrouped into 840 (day, initiative) pairs. stats_daily_initiative and
// stats_daily_usage_initiative hold those pairs only. Both are filled from the rollups they sum: a
// rollup row is the exact sum of its rows (integers, or integer-valued doubles below 2^53), so is the
// sum of rollup rows. From then on the row writer keeps the first (rollup-apply.ts, ROLLUPS), the
// usage triggers, rebuilt here over the three usage rollups, the second. Like every migration, this
// SQL never changes once released.
import { INITIATIVE_USAGE, USAGE_ROLLUPS_V6, USAGE_VALUES } from '../../usage/usage-columns.js';
import { usageRollupTable, usageRollupTriggers } from './v06-usage.js';

export const V10 = `
-- The summary and statistics by initiative, per day of submission: stats_daily_instance_type over its types.
CREATE TABLE stats_daily_initiative (
  organization_id  TEXT    NOT NULL,
  day              INTEGER NOT NULL,
  initiative_id    TEXT    NOT NULL,
  workloads        INTEGER NOT NULL,
  completed        INTEGER NOT NULL,
  failed           INTEGER NOT NULL,
  started          INTEGER NOT NULL,
  open_started     INTEGER NOT NULL,
  duration_base_ms REAL    NOT NULL,
  open_gpus        INTEGER NOT NULL,
  gpu_base_ms      REAL    NOT NULL,
  waiting          INTEGER NOT NULL,
  queue_base_ms    REAL    NOT NULL,
  PRIMARY KEY (organization_id, day, initiative_id)
) STRICT, WITHOUT ROWID;

INSERT INTO stats_daily_initiative
SELECT organization_id, day, initiative_id, SUM(workloads), SUM(completed), SUM(failed), SUM(started), SUM(open_started),
  TOTAL(duration_base_ms), SUM(open_gpus), TOTAL(gpu_base_ms), SUM(waiting), TOTAL(queue_base_ms)
FROM stats_daily_instance_type GROUP BY 1, 2, 3 HAVING SUM(workloads) <> 0;

-- The usage of the summary and of the statistics by initiative, per day of submission.
${usageRollupTable(INITIATIVE_USAGE)}
INSERT INTO stats_daily_usage_initiative
SELECT organization_id, day, initiative_id, ${USAGE_VALUES.map((v) => `SUM(${v})`).join(', ')}
FROM stats_daily_usage GROUP BY 1, 2, 3 HAVING SUM(util_seconds) <> 0 OR SUM(power_seconds) <> 0;

DROP TRIGGER workload_usage_added;
DROP TRIGGER workload_usage_changed;
DROP TRIGGER workload_usage_removed;
${usageRollupTriggers([...USAGE_ROLLUPS_V6, INITIATIVE_USAGE])}`;
