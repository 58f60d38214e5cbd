// Schema of the index on PostgreSQL, versioned in schema_migrations. Like SQLite's list
// (src/store/sqlite/migrations.ts), migrations only ever get appended and a released version's SQL
// never changes. Each runs in one transaction under the schema lock (migrate.ts); DDL is transactional
// in PostgreSQL, so a failed step leaves nothing behind.
//
// Version 1 is SQLite's v4: the same tables, columns and rollups, with these differences:
// - workloads and workload_pods are partitioned by month of submitted_at (partitions.ts), so that
//   retention drops a whole month. A unique key must hold the partition key, hence the primary keys
//   (workload_id, submitted_at) and (pod_uid, submitted_at): writers never change a row's
//   submitted_at, and a pod carries its workload's, so both land in the same month.
// - No triggers: the rollup tables are plain tables, written by the application from rollup deltas
//   (src/store/rollups/), and pods are deleted with their workload's month, not by a cascade.
// - Times stay bigint epoch ms and flags smallint 0/1, so the SQL builders shared with SQLite compare
//   and compute the same way (`is_managed = @managed` with 0 or 1; integer GPU-ms arithmetic).
// - Text keys are COLLATE "C": ordering, keyset cursors and the merges done in JavaScript compare
//   bytes, as SQLite does, whatever the database's default collation.
// - Sums are float8 (SQLite REAL), counts bigint (SQLite INTEGER). connection.ts reads both as JS
//   numbers; the figures stay below 2^53 (src/store/sqlite/migration-v3.ts explains why they are exact).

import { DAILY_VALUES_V3, ROLLUPS, type RollupDefinition } from '../rollups/definitions.js';
import { V6 } from './migration-v6.js';
import { V7 } from './migration-v7.js';
import { V8 } from './migration-v8.js';
import { V9 } from './migration-v9.js';
import { V10 } from './migration-v10.js';
import { V11 } from './migration-v11.js';
import { rollupFillSql } from './rollup-rebuild.js';

export interface Migration {
  version: number;
  description: string;
  /**
   * The oldest version whose builds can still run on this schema: a migration that only adds (a table,
   * a nullable column, an index) keeps the previous value, so a rolling upgrade's old replicas keep
   * running beside the new ones.
   */
  compatibleSince: number;
  sql: string;
}

// The indexes are declared on the partitioned parents: every partition gets its own copy, built when
// it is attached. They translate SQLite's (migrations.ts v1, migration-v3.ts) one for one.
//
// Two index expressions are SQLite's word for word, with GREATEST for SQLite's two-argument MAX and
// float8 literals for its doubles (a bare 1000.0 is numeric in PostgreSQL, and `completed_at / 1000.0`
// would then be exact decimal arithmetic, not SQLite's double division): PostgreSQL uses an
// expression index only when a query's expression parses to the same tree, and the readers render the
// shared builders through the PostgreSQL dialect (src/store/common/dialect.ts). Do not tidy them
// (casts, parentheses that change the tree) without changing those builders;
// test/store/postgres-reads-plans.test.ts checks that the readers render these very texts.
const V1 = `
CREATE TABLE schema_migrations (
  version          integer     PRIMARY KEY,
  description      text        NOT NULL,
  compatible_since integer     NOT NULL,
  applied_at       timestamptz NOT NULL DEFAULT now()
);

-- One row per cluster that writes to this database. cluster_key is the second half of the cluster's
-- advisory write lock (1735, cluster_key): a registry key cannot collide, where a hash of the id
-- could silently make two clusters share one lock. kube_system_uid is the first writer's kube-system
-- namespace UID: a writer from another Kubernetes cluster under the same cluster_id is refused.
CREATE TABLE clusters (
  cluster_key     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  cluster_id      text    COLLATE "C" NOT NULL UNIQUE,
  kube_system_uid text
);

-- The elected writer of each cluster. epoch increases at every takeover, and every write transaction
-- first updates this row WHERE epoch = its own (the fence); heartbeat_at is the server's clock, so a
-- standby judges staleness without trusting replicas' clocks.
CREATE TABLE writer_leases (
  cluster_id     text        COLLATE "C" PRIMARY KEY REFERENCES clusters (cluster_id),
  epoch          bigint      NOT NULL,
  holder         text        NOT NULL,
  holder_pid     integer     NOT NULL,
  acquired_at    timestamptz NOT NULL,
  heartbeat_at   timestamptz NOT NULL,
  snapshot_epoch bigint      NOT NULL DEFAULT 0
);

CREATE TABLE workloads (
  workload_id        text     COLLATE "C" NOT NULL,
  organization_id    text     COLLATE "C" NOT NULL,
  cluster_id         text     COLLATE "C" NOT NULL,
  namespace          text     NOT NULL,
  name               text     NOT NULL,
  kind               text     NOT NULL CHECK (kind IN ('Job', 'Pod')),
  status             text     COLLATE "C" NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
  submitted_by       text     COLLATE "C" NOT NULL,
  initiative_id      text     COLLATE "C" NOT NULL,
  instance_type      text     COLLATE "C" NOT NULL,
  gpu_count          integer  NOT NULL CHECK (gpu_count >= 0),
  submitted_at       bigint   NOT NULL,
  started_at         bigint,
  completed_at       bigint,
  exit_code          integer,
  is_managed         smallint NOT NULL CHECK (is_managed IN (0, 1)),
  resource_version   text     NOT NULL DEFAULT '',
  -- GPU-hours at time t (seconds) = (gpu_seconds_closed + open_gpus * t - open_gpu_start_sum) / 3600,
  -- kept in step with workload_pods so lists and rankings never join the pods.
  gpu_seconds_closed float8   NOT NULL DEFAULT 0,
  open_gpus          integer  NOT NULL DEFAULT 0,
  open_gpu_start_sum float8   NOT NULL DEFAULT 0,
  updated_at         bigint   NOT NULL,
  PRIMARY KEY (workload_id, submitted_at)
) PARTITION BY RANGE (submitted_at);

-- Lists and statistics: the keyset order of every list within an organization, carrying every column
-- that statistics and the GPU-hours ranking read, so their range scans never visit the table.
CREATE INDEX workloads_org_submitted ON workloads (organization_id, submitted_at, workload_id)
  INCLUDE (initiative_id, submitted_by, instance_type, status, is_managed, started_at, completed_at,
           gpu_seconds_closed, open_gpus, open_gpu_start_sum);
CREATE INDEX workloads_org_initiative ON workloads (organization_id, initiative_id, submitted_at, workload_id);
CREATE INDEX workloads_org_status     ON workloads (organization_id, status, submitted_at, workload_id);
CREATE INDEX workloads_org_submitter  ON workloads (organization_id, submitted_by, submitted_at, workload_id);
CREATE INDEX workloads_org_managed    ON workloads (organization_id, is_managed, submitted_at, workload_id);

-- Row-wise retention walks finished rows by completion time (jobs that outlived their month).
CREATE INDEX workloads_completed ON workloads (completed_at) WHERE completed_at IS NOT NULL;
-- Running and pending rows are few; activeGpus sums the running ones from the index alone, and a new
-- writer loads its cluster's unfinished ones at takeover.
CREATE INDEX workloads_running ON workloads (organization_id, initiative_id, gpu_count) WHERE status = 'running';
CREATE INDEX workloads_unfinished ON workloads (cluster_id) WHERE status IN ('pending', 'running');

-- The time from which an unfinished row's figures are all >= 0 (migration-v3.ts explains it); it also
-- covers every column the GPU-hours ranking reads of unfinished rows.
CREATE INDEX workloads_unfinished_horizon ON workloads (
  organization_id,
  GREATEST(COALESCE(started_at, 0), CASE WHEN open_gpus > 0 THEN (open_gpu_start_sum - gpu_seconds_closed) * 1000.0::float8 / open_gpus WHEN open_gpu_start_sum > gpu_seconds_closed THEN 1e18::float8 ELSE 0 END),
  initiative_id, status, submitted_at, submitted_by, instance_type, workload_id,
  started_at, completed_at, gpu_seconds_closed, open_gpus, open_gpu_start_sum)
WHERE completed_at IS NULL;

-- Finished workloads by their GPU-hours, which no longer change: the top of the ranking per
-- (initiative, status) is a short walk from either end.
CREATE INDEX workloads_finished_gpu_hours ON workloads (
  organization_id, initiative_id, status,
  (GREATEST(0.0::float8, gpu_seconds_closed + open_gpus * (completed_at / 1000.0::float8) - open_gpu_start_sum) / 3600.0::float8),
  workload_id)
WHERE completed_at IS NOT NULL;

-- Finished workloads whose pods outlived them, for capacity since ever. Normally empty.
CREATE INDEX workloads_finished_open ON workloads (organization_id, workload_id) WHERE completed_at IS NOT NULL AND open_gpus > 0;

-- A pod's GPU interval. submitted_at is its workload's, so the pod lives in its workload's month and
-- both go when that month is dropped. No foreign key to workloads: every write and every dropped
-- month would pay for checking it, and the writer keeps the two in step in one transaction.
CREATE TABLE workload_pods (
  pod_uid      text    COLLATE "C" NOT NULL,
  workload_id  text    COLLATE "C" NOT NULL,
  submitted_at bigint  NOT NULL,
  gpus         integer NOT NULL CHECK (gpus >= 0),
  started_at   bigint,
  finished_at  bigint,
  PRIMARY KEY (pod_uid, submitted_at)
) PARTITION BY RANGE (submitted_at);

-- Both cover every column a query reads: by workload for aggregate refreshes and joins, by finish
-- time for usage windows (the pods still running at a window's start).
CREATE INDEX workload_pods_workload ON workload_pods (workload_id, started_at, finished_at, gpus);
CREATE INDEX workload_pods_finished ON workload_pods (finished_at, started_at, gpus, workload_id);

-- GPU metric totals over each workload's life (job_lifetime), in the metric's unit. Not partitioned
-- (it has no submitted_at): its rows go when their workload's month is dropped. last_minute is the
-- last minute summed in, so that a retried flush adds nothing twice.
CREATE TABLE workload_gpu_lifetime (
  workload_id  text   COLLATE "C" NOT NULL,
  metric       text   COLLATE "C" NOT NULL,
  sample_count bigint NOT NULL CHECK (sample_count > 0),
  sum          float8 NOT NULL,
  min          float8 NOT NULL,
  max          float8 NOT NULL,
  current      float8,
  last_minute  bigint NOT NULL,
  PRIMARY KEY (workload_id, metric)
);

-- Rollups: SQLite's tables, keys and value columns (migrations.ts v1, migration-v3.ts), written by the
-- writers from per-batch deltas in key order. day = floor(submitted_at / 86400000), UTC.

-- Rows per (initiative, status, submitter, managed): a list's total_count without dates.
CREATE TABLE workload_counts (
  organization_id text     COLLATE "C" NOT NULL,
  initiative_id   text     COLLATE "C" NOT NULL,
  status          text     COLLATE "C" NOT NULL,
  submitted_by    text     COLLATE "C" NOT NULL,
  is_managed      smallint NOT NULL,
  n               bigint   NOT NULL,
  PRIMARY KEY (organization_id, initiative_id, status, submitted_by, is_managed)
);

-- Statistics grouped by submitter, per day of submission. The initiative serves team scopes.
CREATE TABLE stats_daily_submitter (
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
  PRIMARY KEY (organization_id, day, initiative_id, submitted_by)
);

-- Statistics grouped by instance type or by initiative (summed over types) and the summary, per day
-- of submission.
CREATE TABLE stats_daily_instance_type (
  organization_id  text   COLLATE "C" NOT NULL,
  day              bigint NOT NULL,
  initiative_id    text   COLLATE "C" NOT NULL,
  instance_type    text   COLLATE "C" NOT NULL,
  workloads        bigint NOT NULL,
  completed        bigint NOT NULL,
  failed           bigint NOT NULL,
  started          bigint NOT NULL,
  open_started     bigint NOT NULL,
  duration_base_ms float8 NOT NULL,
  open_gpus        bigint NOT NULL,
  gpu_base_ms      float8 NOT NULL,
  PRIMARY KEY (organization_id, day, initiative_id, instance_type)
);

-- Every workload ever, without the submitter: the list's total_count, the GPU-hours ranking's count
-- and average, and capacity used since ever (period total).
CREATE TABLE workload_totals (
  organization_id text   COLLATE "C" NOT NULL,
  initiative_id   text   COLLATE "C" NOT NULL,
  status          text   COLLATE "C" NOT NULL,
  instance_type   text   COLLATE "C" NOT NULL,
  workloads       bigint NOT NULL,
  open_gpus       bigint NOT NULL,
  open_gpu_days   bigint NOT NULL,
  gpu_base_ms     float8 NOT NULL,
  PRIMARY KEY (organization_id, initiative_id, status, instance_type)
);
`;

// v2: GPU telemetry shared between replicas (docs/scaling.md "GPU metrics on every replica"). The
// writer of a cluster adds one row per workload per summary bucket; every replica answers /metrics and
// rankings from them. Arrays hold one figure per metric, in the API's METRIC_NAMES order, in the
// metric's unit; min and max are null for a metric with no sample in the bucket.
const V2 = `
CREATE TABLE workload_gpu_buckets (
  workload_id text     COLLATE "C" NOT NULL,
  bucket_at   bigint   NOT NULL,
  cluster_id  text     COLLATE "C" NOT NULL,
  count       integer[] NOT NULL,
  sum         float8[] NOT NULL,
  min         float8[] NOT NULL,
  max         float8[] NOT NULL,
  latest_sum  float8[] NOT NULL,
  latest_count integer[] NOT NULL,
  PRIMARY KEY (workload_id, bucket_at)
);
-- The writer's last-hour refresh and pruning read one cluster's buckets by time.
CREATE INDEX workload_gpu_buckets_cluster ON workload_gpu_buckets (cluster_id, bucket_at);

-- Each workload's figures over the last hour of buckets, as of newest_at (rankings), one row per
-- workload, replaced per cluster by its writer after every bucket.
CREATE TABLE workload_gpu_last_hour (
  workload_id  text     COLLATE "C" PRIMARY KEY,
  cluster_id   text     COLLATE "C" NOT NULL,
  newest_at    bigint   NOT NULL,
  count        bigint[] NOT NULL,
  sum          float8[] NOT NULL,
  latest_sum   float8[] NOT NULL,
  latest_count integer[] NOT NULL
);
CREATE INDEX workload_gpu_last_hour_cluster ON workload_gpu_last_hour (cluster_id);
`;

// v3: where each workload and pod lives. A row's month is not in its id, so without these a lookup by
// id probes the primary key of every monthly partition (18 at 400 days): 67 % of the writer's
// statement time, docs/performance.md. One primary-key probe here names the one partition to read.
// Statement triggers on the partitioned parents keep them exact whoever writes (the writer, retention,
// `gpucap migrate`, an older build during a rolling upgrade), from the rows each statement inserted or
// deleted, once per statement rather than per row. A dropped month fires no trigger: dropPartition
// deletes its keys itself (partitions.ts).
//
// The writers keep one row per id (they look the id up before inserting), so a key names the one
// month of its row; the newest insert of an id wins, and a delete removes a key only if it still
// names the deleted row's month. A key left behind names a month without the row: a lookup finds
// nothing there, as for a new id. A pod that moves to another workload's month is deleted and
// inserted again, so its key follows it. submitted_at never changes in place (it is the partition
// key, and a row moved between partitions by UPDATE would fire neither trigger): such an UPDATE is
// refused.
/** A key table (id -> submitted_at) of one partitioned table, and the functions that keep it. */
function keyTable(keys: string, id: string, source: string): string {
  return `
CREATE TABLE ${keys} (
  ${id.padEnd(12)} text   COLLATE "C" PRIMARY KEY,
  submitted_at bigint NOT NULL
);
CREATE INDEX ${keys}_month ON ${keys} (submitted_at);

CREATE FUNCTION ${keys}_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ${keys} (${id}, submitted_at) SELECT ${id}, submitted_at FROM added
  ON CONFLICT (${id}) DO UPDATE SET submitted_at = excluded.submitted_at;
  RETURN NULL;
END $$;
CREATE FUNCTION ${keys}_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ${keys} k USING removed r WHERE k.${id} = r.${id} AND k.submitted_at = r.submitted_at;
  RETURN NULL;
END $$;

CREATE TRIGGER ${source}_keys_add AFTER INSERT ON ${source} REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION ${keys}_add();
CREATE TRIGGER ${source}_keys_remove AFTER DELETE ON ${source} REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION ${keys}_remove();
CREATE TRIGGER ${source}_submitted_at_unchanged BEFORE UPDATE OF submitted_at ON ${source}
  FOR EACH ROW EXECUTE FUNCTION submitted_at_unchanged();

INSERT INTO ${keys} (${id}, submitted_at) SELECT ${id}, submitted_at FROM ${source} ON CONFLICT DO NOTHING;
-- Statistics from the start: lookups by key are planned as index probes, not as scans.
ANALYZE ${keys};
`;
}

const V3 = `
-- Writers wait from here to the commit (readers do not): a row written between the copy below and
-- the triggers would have no key.
LOCK TABLE workloads, workload_pods IN SHARE ROW EXCLUSIVE MODE;

CREATE FUNCTION submitted_at_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.submitted_at IS DISTINCT FROM OLD.submitted_at THEN
    RAISE EXCEPTION 'Cannot move % from submitted_at % to %: submitted_at is the partition key and never changes (delete the row and insert it again)',
      TG_TABLE_NAME, OLD.submitted_at, NEW.submitted_at;
  END IF;
  RETURN NEW;
END $$;
${keyTable('workload_keys', 'workload_id', 'workloads')}${keyTable('pod_keys', 'pod_uid', 'workload_pods')}`;

// v4: a team's workloads of one status, in list order. The lists run on generic plans (named
// statements, src/store/postgres/workload-index.ts), which must not depend on the values: with a team
// and a status the planner had to pick between the team's index and the status's, and a team's
// pending workloads where the team had none walked the whole team on the generic plan (297 ms against
// 20 ms planned for the values). With this index the pair has one index, as every single filter does,
// and its pages plan once per connection instead of 3.6-4.6 ms per request. SQLite plans each
// statement for its values and does without it. Built under a SHARE lock: writers wait, readers do not.
const V4 = `
CREATE INDEX workloads_org_initiative_status ON workloads (organization_id, initiative_id, status, submitted_at, workload_id);
`;

// v5: why failed and cancelled workloads did not complete, and the daily rollup of statistics by it
// (SQLite's migration-v5.ts). Rows from before get the reason their own row proves; live objects get
// their real one at the next relist. Writers wait from the lock to the commit: a row written between
// the backfill and the commit would be missing from the new rollup. A writer of an older release
// keeps neither the column nor the rollup, hence compatible_since 5 (docs/scaling.md).
// Filled with the figures v5 created the table with: v7 added more (migration-v7.ts).
const FAILURE_REASON_ROLLUP: RollupDefinition = {
  ...(ROLLUPS.find((r) => r.table === 'stats_daily_failure_reason') as RollupDefinition),
  values: DAILY_VALUES_V3,
};

const V5 = `
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

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'workloads and pods partitioned by month, the rollups, writer leases and their indexes (SQLite v4)',
    compatibleSince: 1,
    sql: V1,
  },
  {
    version: 2,
    description: 'GPU telemetry buckets per workload and their last-hour figures, shared by the replicas',
    compatibleSince: 1,
    sql: V2,
  },
  {
    version: 3,
    description: 'the month of each workload and pod by id (workload_keys, pod_keys), kept by statement triggers',
    compatibleSince: 1,
    sql: V3,
  },
  {
    version: 4,
    description: 'the index of a team\'s workloads of one status, in list order',
    compatibleSince: 1,
    sql: V4,
  },
  {
    version: 5,
    description: 'failure reasons of failed and cancelled workloads, and their daily rollup',
    compatibleSince: 5,
    sql: V5,
  },
  {
    version: 6,
    description: 'what each workload\'s GPUs did (idle, efficiency, energy, XID errors), and its daily rollup',
    compatibleSince: 6,
    sql: V6,
  },
  {
    version: 7,
    description: 'the queue figures of the daily rollups: workloads waiting and the base of their queue time',
    compatibleSince: 7,
    sql: V7,
  },
  {
    version: 8,
    description: 'the queue figures of workload_totals and the index of the waits that ended, for the queue ranking',
    compatibleSince: 8,
    sql: V8,
  },
  {
    version: 9,
    description: 'the idle index of usage covers the sums of the usage rankings',
    compatibleSince: 8,
    sql: V9,
  },
  {
    version: 10,
    description: 'the daily rollups of workloads and usage per initiative, for the summary and the groups by initiative',
    compatibleSince: 10,
    sql: V10,
  },
  {
    version: 11,
    description: 'the weekly rollups of workloads and usage by submitter, for the groups by submitter over whole weeks',
    compatibleSince: 11,
    sql: V11,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
