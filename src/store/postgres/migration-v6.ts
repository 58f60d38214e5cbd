// Schema v6 on PostgreSQL: SQLite's migration-v6.ts, what each workload's GPUs did and its daily
// rollup. Here the writers keep both with explicit statements (usage-writes.ts) rather than
// triggers: the bucket writer adds usage and its rollup in the statement that stores the bucket, the
// row writers move a workload's usage when its keys change, retention takes it out. Each statement
// locks usage rows in workload_id order, then rollup rows in key order, so writers never deadlock.
// An older writer would not move usage with the keys: compatible_since 6 (docs/scaling.md).
export const V6 = `
CREATE TABLE workload_usage (
  workload_id     text   COLLATE "C" PRIMARY KEY,
  util_seconds    bigint NOT NULL DEFAULT 0,
  util_weighted   bigint NOT NULL DEFAULT 0,
  idle_seconds    bigint NOT NULL DEFAULT 0,
  power_seconds   bigint NOT NULL DEFAULT 0,
  energy_dj       bigint NOT NULL DEFAULT 0,
  gpu_errors      bigint NOT NULL DEFAULT 0,
  organization_id text   COLLATE "C",
  day             bigint,
  initiative_id   text   COLLATE "C",
  submitted_by    text   COLLATE "C",
  instance_type   text   COLLATE "C",
  failure_reason  text   COLLATE "C"
);

CREATE INDEX workload_usage_idle ON workload_usage (organization_id, initiative_id, idle_seconds, workload_id) WHERE util_seconds > 0;
CREATE INDEX workload_usage_efficiency ON workload_usage (organization_id, initiative_id, (util_weighted::float8 / util_seconds), workload_id)
  WHERE util_seconds > 0;

CREATE TABLE stats_daily_usage (
  organization_id text   COLLATE "C" NOT NULL,
  day             bigint NOT NULL,
  initiative_id   text   COLLATE "C" NOT NULL,
  submitted_by    text   COLLATE "C" NOT NULL,
  instance_type   text   COLLATE "C" NOT NULL,
  failure_reason  text   COLLATE "C" NOT NULL,
  util_seconds    bigint NOT NULL,
  util_weighted   bigint NOT NULL,
  idle_seconds    bigint NOT NULL,
  power_seconds   bigint NOT NULL,
  energy_dj       bigint NOT NULL,
  PRIMARY KEY (organization_id, day, initiative_id, submitted_by, instance_type, failure_reason)
);
`;
