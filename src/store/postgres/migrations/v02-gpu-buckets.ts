// Released migrations' SQL never changes: databases already carry it (schema.ts).

// v2: GPU telemetry shared between replicas (docs/scaling.md "GPU metrics on every replica"). The
// writer of a cluster adds one row per workload per summary bucket; every replica answers /metrics and
// rankings from them. Arrays hold one figure per metric, in the API's METRIC_NAMES order, in the
// metric's unit; min and max are null for a metric with no sample in the bucket.
export const V2 = `
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
