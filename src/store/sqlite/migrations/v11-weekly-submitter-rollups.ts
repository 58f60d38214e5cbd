// Schema v11: the weekly rollups of workloads and usage by submitter. A day holds a row per team and
// user of stats_daily_submitter and of stats_daily_usage_submitter: at 1M workloads, a month of one
// organization by submitter read 10k rows of each (p99 52 ms; by week 112 ms). stats_weekly_submitter
// and stats_weekly_usage_submitter hold the same per week, keyed by its Monday (`day`); the statistics
// by submitter read whole weeks there and the days at the edges from the daily rollups
// (week-window.ts). A weekly row's figures are based at its Monday: what an open row adds grows from
// there (figures.ts), so the fill moves each daily row's base back by (day − Monday) of its open
// figures. Every figure is an integer-valued sum below 2^53: the fill is exact. From then on the row
// writer keeps the first (ROLLUPS), the usage triggers, rebuilt here over the four usage rollups, the
// second. Like every migration, this SQL never changes once released.
import { DAY_MS } from '../../rollups/figures.js';
import { INITIATIVE_USAGE, USAGE_ROLLUPS_V6, USAGE_VALUES, WEEKLY_SUBMITTER_USAGE } from '../../usage/usage-columns.js';
import { weekStartSql } from '../../statistics/week-sql.js';
import { usageRollupTable, usageRollupTriggers } from './v06-usage.js';

const MONDAY = weekStartSql('day');
/** A daily figure based at the Monday instead: its base less (day − Monday) days per open unit. */
const atMonday = (base: string, open: string) => `TOTAL(${base} - ${open} * (day - ${MONDAY}) * ${DAY_MS}.0)`;

/** A week's counts: the sums of its days'. */
const COUNT_SUMS = 'SUM(workloads), SUM(completed), SUM(failed), SUM(started), SUM(open_started)';

export const V11 = `
-- Statistics by submitter per week of submission, keyed by its Monday.
CREATE TABLE stats_weekly_submitter (
  organization_id  TEXT    NOT NULL,
  day              INTEGER NOT NULL,
  initiative_id    TEXT    NOT NULL,
  submitted_by     TEXT    NOT NULL,
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
  PRIMARY KEY (organization_id, day, initiative_id, submitted_by)
) STRICT, WITHOUT ROWID;

INSERT INTO stats_weekly_submitter
SELECT organization_id, ${MONDAY}, initiative_id, submitted_by, ${COUNT_SUMS},
  ${atMonday('duration_base_ms', 'open_started')}, SUM(open_gpus), ${atMonday('gpu_base_ms', 'open_gpus')}, SUM(waiting),
  ${atMonday('queue_base_ms', 'waiting')}
FROM stats_daily_submitter GROUP BY 1, 2, 3, 4 HAVING SUM(workloads) <> 0;

-- The usage of the statistics by submitter, per week of submission.
${usageRollupTable(WEEKLY_SUBMITTER_USAGE)}
INSERT INTO stats_weekly_usage_submitter
SELECT organization_id, ${MONDAY}, initiative_id, submitted_by, ${USAGE_VALUES.map((v) => `SUM(${v})`).join(', ')}
FROM stats_daily_usage_submitter GROUP BY 1, 2, 3, 4 HAVING SUM(util_seconds) <> 0 OR SUM(power_seconds) <> 0;

DROP TRIGGER workload_usage_added;
DROP TRIGGER workload_usage_changed;
DROP TRIGGER workload_usage_removed;
${usageRollupTriggers([...USAGE_ROLLUPS_V6, INITIATIVE_USAGE, WEEKLY_SUBMITTER_USAGE])}`;
