// Schema v12: GPU-hours count whole-GPU equivalents (a 1g.10gb MIG slice of an H100 is 1/7 of a GPU,
// one of 4 time-sliced replicas 1/4; docs/workloads.md, "How GPUs are counted"). So a pod's `gpus`
// and a row's `open_gpus`, and the open figures of the rollups, become REAL; gpu_count stays the
// devices held. Rows gain allocated_gpus, gpu_sharing and gpu_model (NULL for rows written before:
// their share cannot be known after the fact, they hold gpu_count whole GPUs).
//
// STRICT tables keep their column types. workload_pods, which nothing references, and the rollups,
// which have no triggers or foreign keys, are made again with their columns in the same order and
// their rows copied. workloads, which the pods reference (ON DELETE CASCADE: dropping it would delete
// them), gains a REAL open_gpus in place: the new column takes the old one's values, the old one is
// dropped (with the indexes that read it, rebuilt after with the same text) and the new one renamed.
// A dropped column is no DELETE, so no foreign key action or trigger fires. open_gpus is the last
// column of workloads from here on, on both backends. Whole-GPU figures are integers,
// exact in REAL, so every existing figure reads the same to the last bit. Like every migration, this
// SQL never changes once released.
import { GPU_INDEXES_V3 } from './v03-rollups.js';

const WORKLOAD_GPU_INDEXES = [
  'workloads_org_submitted', 'workloads_unfinished_horizon', 'workloads_finished_gpu_hours', 'workloads_finished_open',
];

/** workloads_org_submitted as schema v1 made it, word for word. */
const ORG_SUBMITTED_V1 = `
CREATE INDEX workloads_org_submitted  ON workloads (
  organization_id, submitted_at, workload_id,
  initiative_id, submitted_by, instance_type, status, is_managed, started_at, completed_at,
  gpu_seconds_closed, open_gpus, open_gpu_start_sum);`;

/** The pods' covering indexes as schema v1 made them. */
const POD_INDEXES_V1 = `
CREATE INDEX workload_pods_workload ON workload_pods (workload_id, started_at, finished_at, gpus);
CREATE INDEX workload_pods_finished ON workload_pods (finished_at, started_at, gpus, workload_id);`;

const TEXT = 'TEXT';
const INTEGER = 'INTEGER';
const REAL = 'REAL';
type Columns = readonly (readonly [string, string])[];
/** The queue columns v7 and v8 added, with the default that ADD COLUMN gave them. */
const QUEUE_DEFAULTED = new Set(['waiting', 'queue_base_ms', 'waiting_days']);

const DAILY_V11: Columns = [
  ['workloads', INTEGER], ['completed', INTEGER], ['failed', INTEGER], ['started', INTEGER], ['open_started', INTEGER],
  ['duration_base_ms', REAL], ['open_gpus', REAL], ['gpu_base_ms', REAL], ['waiting', INTEGER], ['queue_base_ms', REAL],
];
const ORG: readonly [string, string] = ['organization_id', TEXT];
const DAY: readonly [string, string] = ['day', INTEGER];
const INITIATIVE: readonly [string, string] = ['initiative_id', TEXT];

/** The rollups that hold open GPUs, as schema v11 left them, with v12's types. */
const ROLLUPS_V12: readonly { table: string; keys: Columns; values: Columns }[] = [
  { table: 'stats_daily_submitter', keys: [ORG, DAY, INITIATIVE, ['submitted_by', TEXT]], values: DAILY_V11 },
  { table: 'stats_daily_instance_type', keys: [ORG, DAY, INITIATIVE, ['instance_type', TEXT]], values: DAILY_V11 },
  {
    table: 'workload_totals',
    keys: [ORG, INITIATIVE, ['status', TEXT], ['instance_type', TEXT]],
    values: [
      ['workloads', INTEGER], ['open_gpus', REAL], ['open_gpu_days', REAL], ['gpu_base_ms', REAL],
      ['waiting', INTEGER], ['waiting_days', INTEGER], ['queue_base_ms', REAL],
    ],
  },
  { table: 'stats_daily_failure_reason', keys: [ORG, DAY, INITIATIVE, ['failure_reason', TEXT]], values: DAILY_V11 },
  { table: 'stats_daily_initiative', keys: [ORG, DAY, INITIATIVE], values: DAILY_V11 },
  { table: 'stats_weekly_submitter', keys: [ORG, DAY, INITIATIVE, ['submitted_by', TEXT]], values: DAILY_V11 },
];

function remadeRollup(rollup: (typeof ROLLUPS_V12)[number]): string {
  const columns = [...rollup.keys, ...rollup.values]
    .map(([name, type]) => `  ${name} ${type} NOT NULL${QUEUE_DEFAULTED.has(name) ? ' DEFAULT 0' : ''},`);
  return `
CREATE TABLE ${rollup.table}_v12 (
${columns.join('\n')}
  PRIMARY KEY (${rollup.keys.map(([name]) => name).join(', ')})
) STRICT, WITHOUT ROWID;
INSERT INTO ${rollup.table}_v12 SELECT * FROM ${rollup.table};
DROP TABLE ${rollup.table};
ALTER TABLE ${rollup.table}_v12 RENAME TO ${rollup.table};`;
}

export const V12 = `
CREATE TABLE workload_pods_v12 (
  pod_uid     TEXT    PRIMARY KEY,
  workload_id TEXT    NOT NULL REFERENCES workloads (workload_id) ON DELETE CASCADE,
  gpus        REAL    NOT NULL CHECK (gpus >= 0),
  started_at  INTEGER,
  finished_at INTEGER
) STRICT;
INSERT INTO workload_pods_v12 SELECT pod_uid, workload_id, gpus, started_at, finished_at FROM workload_pods;
DROP TABLE workload_pods;
ALTER TABLE workload_pods_v12 RENAME TO workload_pods;
${POD_INDEXES_V1}

ALTER TABLE workloads ADD COLUMN open_gpus_v12 REAL NOT NULL DEFAULT 0;
UPDATE workloads SET open_gpus_v12 = open_gpus WHERE open_gpus <> 0;
${WORKLOAD_GPU_INDEXES.map((name) => `DROP INDEX ${name};`).join('\n')}
ALTER TABLE workloads DROP COLUMN open_gpus;
ALTER TABLE workloads RENAME COLUMN open_gpus_v12 TO open_gpus;
${ORG_SUBMITTED_V1}
${GPU_INDEXES_V3}

ALTER TABLE workloads ADD COLUMN allocated_gpus REAL CHECK (allocated_gpus >= 0);
ALTER TABLE workloads ADD COLUMN gpu_sharing TEXT CHECK (gpu_sharing IN ('exclusive', 'mig', 'time_slicing', 'mps', 'fractional'));
ALTER TABLE workloads ADD COLUMN gpu_model TEXT;
${ROLLUPS_V12.map(remadeRollup).join('\n')}
`;
