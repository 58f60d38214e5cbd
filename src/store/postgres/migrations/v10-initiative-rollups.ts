// Schema v10 on PostgreSQL: SQLite's migrations/v10-initiative-rollups.ts, the daily rollups per initiative of workloads
// and usage, filled from the rollups they sum. Writers wait from the lock to the commit (workloads
// first, as every row writer takes it, then workload_usage, as the bucket writer does): a write
// between the fill and the commit would be missing from the new tables. A writer of an older release
// would not keep them, hence compatible_since 10 (docs/scaling.md). Like every migration, this SQL
// never changes.
import { USAGE_VALUES } from '../../usage/usage-columns.js';

export const V10 = `
LOCK TABLE workloads, workload_usage IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE stats_daily_initiative (
  organization_id  text   COLLATE "C" NOT NULL,
  day              bigint NOT NULL,
  initiative_id    text   COLLATE "C" NOT NULL,
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
  PRIMARY KEY (organization_id, day, initiative_id)
);

INSERT INTO stats_daily_initiative
SELECT organization_id, day, initiative_id, SUM(workloads), SUM(completed), SUM(failed), SUM(started), SUM(open_started),
  SUM(duration_base_ms), SUM(open_gpus), SUM(gpu_base_ms), SUM(waiting), SUM(queue_base_ms)
FROM stats_daily_instance_type GROUP BY 1, 2, 3 HAVING SUM(workloads) <> 0;

CREATE TABLE stats_daily_usage_initiative (
  organization_id text   COLLATE "C" NOT NULL,
  day             bigint NOT NULL,
  initiative_id   text   COLLATE "C" NOT NULL,
${USAGE_VALUES.map((v) => `  ${v.padEnd(15)} bigint NOT NULL,`).join('\n')}
  PRIMARY KEY (organization_id, day, initiative_id)
);

INSERT INTO stats_daily_usage_initiative
SELECT organization_id, day, initiative_id, ${USAGE_VALUES.map((v) => `SUM(${v})`).join(', ')}
FROM stats_daily_usage GROUP BY 1, 2, 3 HAVING SUM(util_seconds) <> 0 OR SUM(power_seconds) <> 0;
`;
