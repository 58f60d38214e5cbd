// Schema v12 on PostgreSQL: SQLite's migrations/v12-gpu-shares.ts. GPU-hours count whole-GPU
// equivalents, so a pod's `gpus`, a row's `open_gpus` and the open figures of the rollups become
// float8, and rows gain allocated_gpus, gpu_sharing and gpu_model, NULL for the rows written before.
// Integers are exact in float8 below 2^53, so every whole-GPU figure reads the same.
//
// The pods and the rollups change type in place (a rewrite of workload_pods: minutes on a large
// index, during which its writers wait; docs/scaling.md). workloads' open_gpus moves to the end, as
// SQLite's must: the new column takes the values of the unfinished rows only (finished rows hold 0
// but for pods that outlived them), the old one is dropped, which PostgreSQL does without a rewrite,
// and the four indexes that read it are built again with schema v1's text, word for word (the
// readers' expressions must parse to the same trees). A writer of an older release would sum shares
// into integers, hence compatible_since 12. Like every migration, this SQL never changes.
import { GPU_SECONDS_CROSS_ZERO } from './v01-partitioned-workloads.js';

const DAILY_ROLLUPS = [
  'stats_daily_submitter', 'stats_daily_instance_type', 'stats_daily_failure_reason', 'stats_daily_initiative', 'stats_weekly_submitter',
];

/** Schema v1's indexes that read open_gpus, word for word. */
const OPEN_GPU_INDEXES_V1 = `
CREATE INDEX workloads_org_submitted ON workloads (organization_id, submitted_at, workload_id)
  INCLUDE (initiative_id, submitted_by, instance_type, status, is_managed, started_at, completed_at,
           gpu_seconds_closed, open_gpus, open_gpu_start_sum);

CREATE INDEX workloads_unfinished_horizon ON workloads (
  organization_id,
  GREATEST(COALESCE(started_at, 0), ${GPU_SECONDS_CROSS_ZERO}),
  initiative_id, status, submitted_at, submitted_by, instance_type, workload_id,
  started_at, completed_at, gpu_seconds_closed, open_gpus, open_gpu_start_sum)
WHERE completed_at IS NULL;

CREATE INDEX workloads_finished_gpu_hours ON workloads (
  organization_id, initiative_id, status,
  (GREATEST(0.0::float8, gpu_seconds_closed + open_gpus * (completed_at / 1000.0::float8) - open_gpu_start_sum) / 3600.0::float8),
  workload_id)
WHERE completed_at IS NOT NULL;

CREATE INDEX workloads_finished_open ON workloads (organization_id, workload_id) WHERE completed_at IS NOT NULL AND open_gpus > 0;
-- Built again after workloads_org_submitted, as in schema v1: where the two cost the same (an empty
-- month's partition), the planner takes the newer, and a team's list must seek its team's index.
DROP INDEX workloads_org_initiative;
CREATE INDEX workloads_org_initiative ON workloads (organization_id, initiative_id, submitted_at, workload_id);
`;

export const V12 = `
ALTER TABLE workload_pods ALTER COLUMN gpus TYPE float8;

ALTER TABLE workloads ADD COLUMN open_gpus_v12 float8 NOT NULL DEFAULT 0;
UPDATE workloads SET open_gpus_v12 = open_gpus WHERE open_gpus <> 0;
DROP INDEX workloads_org_submitted, workloads_unfinished_horizon, workloads_finished_gpu_hours, workloads_finished_open;
ALTER TABLE workloads DROP COLUMN open_gpus;
ALTER TABLE workloads RENAME COLUMN open_gpus_v12 TO open_gpus;
${OPEN_GPU_INDEXES_V1}
ALTER TABLE workloads
  ADD COLUMN allocated_gpus float8 CHECK (allocated_gpus >= 0),
  ADD COLUMN gpu_sharing text COLLATE "C" CHECK (gpu_sharing IN ('exclusive', 'mig', 'time_slicing', 'mps', 'fractional')),
  ADD COLUMN gpu_model text COLLATE "C";
${DAILY_ROLLUPS.map((table) => `ALTER TABLE ${table} ALTER COLUMN open_gpus TYPE float8;`).join('\n')}
ALTER TABLE workload_totals ALTER COLUMN open_gpus TYPE float8, ALTER COLUMN open_gpu_days TYPE float8;
`;
