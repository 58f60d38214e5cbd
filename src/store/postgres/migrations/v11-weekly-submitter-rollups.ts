// Schema v11 on PostgreSQL: SQLite's migrations/v11-weekly-submitter-rollups.ts, the weekly rollups of workloads and usage by
// submitter, keyed by each week's Monday and filled from the daily rollups they sum. Writers wait
// from the lock to the commit (workloads first, as every row writer takes it, then workload_usage, as
// the bucket writer does): a write between the fill and the commit would be missing from the new
// tables. A writer of an older release would not keep them, hence compatible_since 11
// (docs/scaling.md). Like every migration, this SQL never changes.
import { DAY_MS } from '../../sql/rollup-sql.js';
import { USAGE_VALUES } from '../../usage/usage-columns.js';
import { weekStartSql } from '../../statistics/week-sql.js';

const MONDAY = weekStartSql('day');
/** A daily figure based at the Monday instead: its base less (day − Monday) days per open unit. */
const atMonday = (base: string, open: string) => `SUM(${base} - ${open} * (day - ${MONDAY}) * ${DAY_MS}.0::float8)`;

/** A week's counts: the sums of its days'. */
const COUNT_SUMS = 'SUM(workloads), SUM(completed), SUM(failed), SUM(started), SUM(open_started)';

export const V11 = `
LOCK TABLE workloads, workload_usage IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE stats_weekly_submitter (
  organization_id  text   COLLATE "C" NOT NULL,
  day              bigint NOT NULL,
  initiative_id    text   COLLATE "C" NOT NULL,
  submitted_by     text   COLLATE "C" NOT NULL,
  workloads        bigint NOT NULL,
  completed        bigint NOT NULL,
  failed           bigint NOT NULL,
  started          bigint NOT NULL,
  open_started     bigint NOT NULL,
  duration_base_ms float8 NOT NULL,
  open_gpus        bigint NOT NULL,
  gpu_base_ms      float8 NOT NULL,
  waiting          bigint NOT NULL,
  queue_base_ms    float8 NOT NULL,
  PRIMARY KEY (organization_id, day, initiative_id, submitted_by)
);

INSERT INTO stats_weekly_submitter
SELECT organization_id, ${MONDAY}, initiative_id, submitted_by, ${COUNT_SUMS},
  ${atMonday('duration_base_ms', 'open_started')}, SUM(open_gpus), ${atMonday('gpu_base_ms', 'open_gpus')}, SUM(waiting),
  ${atMonday('queue_base_ms', 'waiting')}
FROM stats_daily_submitter GROUP BY 1, 2, 3, 4 HAVING SUM(workloads) <> 0;

CREATE TABLE stats_weekly_usage_submitter (
  organization_id text   COLLATE "C" NOT NULL,
  day             bigint NOT NULL,
  initiative_id   text   COLLATE "C" NOT NULL,
  submitted_by    text   COLLATE "C" NOT NULL,
${USAGE_VALUES.map((v) => `  ${v.padEnd(15)} bigint NOT NULL,`).join('\n')}
  PRIMARY KEY (organization_id, day, initiative_id, submitted_by)
);

INSERT INTO stats_weekly_usage_submitter
SELECT organization_id, ${MONDAY}, initiative_id, submitted_by, ${USAGE_VALUES.map((v) => `SUM(${v})`).join(', ')}
FROM stats_daily_usage_submitter GROUP BY 1, 2, 3, 4 HAVING SUM(util_seconds) <> 0 OR SUM(power_seconds) <> 0;
`;
