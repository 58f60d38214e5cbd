// Schema 1 of the PostgreSQL index: SQLite's schema 4, partitioned by month (schema.ts says how it differs).
// Released migrations' SQL never changes: databases already carry it (schema.ts).

// The indexes are declared on the partitioned parents: every partition gets its own copy, built when
// it is attached. They translate SQLite's (migrations.ts v1, migrations/v03-rollups.ts) one for one.
//
// Two index expressions are SQLite's word for word, with GREATEST for SQLite's two-argument MAX and
// float8 literals for its doubles (a bare 1000.0 is numeric in PostgreSQL, and `completed_at / 1000.0`
// would then be exact decimal arithmetic, not SQLite's double division): PostgreSQL uses an
// expression index only when a query's expression parses to the same tree, and the readers render the
// shared builders through the PostgreSQL dialect (src/store/sql/dialect.ts). Do not tidy them
// (casts, parentheses that change the tree) without changing those builders;
// test/store/postgres/reads-plans.test.ts checks that the readers render these very texts.

/** When an unfinished row's GPU-seconds cross 0: part of workloads_unfinished_horizon's expression. */
export const GPU_SECONDS_CROSS_ZERO =
  'CASE WHEN open_gpus > 0 THEN (open_gpu_start_sum - gpu_seconds_closed) * 1000.0::float8 / open_gpus ' +
  'WHEN open_gpu_start_sum > gpu_seconds_closed THEN 1e18::float8 ELSE 0 END';

export const V1 = `
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

-- The time from which an unfinished row's figures are all >= 0 (migrations/v03-rollups.ts explains it); it also
-- covers every column the GPU-hours ranking reads of unfinished rows.
CREATE INDEX workloads_unfinished_horizon ON workloads (
  organization_id,
  GREATEST(COALESCE(started_at, 0), ${GPU_SECONDS_CROSS_ZERO}),
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

-- Rollups: SQLite's tables, keys and value columns (migrations.ts v1, migrations/v03-rollups.ts), written by the
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
