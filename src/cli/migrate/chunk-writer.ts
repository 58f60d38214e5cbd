// The writes of `gpucap migrate` into PostgreSQL, one chunk of rows per statement: every column as an
// array through unnest, so that 5,000 rows cost one round trip and one plan. The rows are copied as
// SQLite holds them, GPU aggregates included: they are what the readers compute from, and recomputing
// them from the pods would round differently from SQLite's sums in the last bit.
//
// Two modes: 'insert' for a first copy (ON CONFLICT DO NOTHING: a chunk written again changes
// nothing), 'replace' for a delta over an earlier copy, where the source's row wins. The functions
// hang off one object so that a test can make one of them fail (the seam of the resume test).
import type { Queryable } from '../../store/postgres/transaction.js';
import { USAGE_FIGURES } from '../../store/usage/usage-columns.js';
import { addFleetRowSql } from '../../store/sql/fleet-ledger-sql.js';
import {
  WORKLOAD_COLUMNS, type SourceFleetRow, type SourceLifetime, type SourcePod, type SourceUsage, type SourceWorkload,
} from './source.js';

export type WriteMode = 'insert' | 'replace';

const WORKLOAD_TYPES: Record<(typeof WORKLOAD_COLUMNS)[number], string> = {
  workload_id: 'text', organization_id: 'text', cluster_id: 'text', namespace: 'text', name: 'text', kind: 'text', status: 'text',
  submitted_by: 'text', initiative_id: 'text', instance_type: 'text', gpu_count: 'int', submitted_at: 'bigint', started_at: 'bigint',
  completed_at: 'bigint', exit_code: 'int', is_managed: 'smallint', resource_version: 'text', failure_reason: 'text',
  allocated_gpus: 'float8', gpu_sharing: 'text', gpu_model: 'text', capacity_type: 'text',
  gpu_seconds_closed: 'float8', open_gpus: 'float8', open_gpu_start_sum: 'float8', updated_at: 'bigint',
};

const unnest = (types: readonly string[]) => `SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;

const INSERT_WORKLOADS = `INSERT INTO workloads (${WORKLOAD_COLUMNS.join(', ')}) ${unnest(WORKLOAD_COLUMNS.map((c) => WORKLOAD_TYPES[c]))}`;
const WORKLOAD_CONFLICT: Record<WriteMode, string> = {
  insert: 'ON CONFLICT (workload_id, submitted_at) DO NOTHING',
  replace: `ON CONFLICT (workload_id, submitted_at) DO UPDATE SET
    ${WORKLOAD_COLUMNS.filter((c) => c !== 'workload_id' && c !== 'submitted_at').map((c) => `${c} = excluded.${c}`).join(', ')}`,
};
// A delta's rows replace what the target holds of them: their pods (the source's are copied next,
// with their current owner and month), and the row itself where SQLite moved its submitted_at to
// another month (SQLite's writer lets it change; PostgreSQL's never does, so the target kept the old).
const DELETE_PODS_OF = 'DELETE FROM workload_pods WHERE workload_id = ANY($1::text[])';
const DELETE_MOVED = `DELETE FROM workloads w USING unnest($1::text[], $2::bigint[]) AS d (workload_id, submitted_at)
  WHERE w.workload_id = d.workload_id AND w.submitted_at <> d.submitted_at`;

const POD_COLUMNS = [
  'pod_uid', 'workload_id', 'submitted_at', 'gpus', 'started_at', 'finished_at',
] as const satisfies readonly (keyof SourcePod)[];
const POD_TYPES = ['text', 'text', 'bigint', 'float8', 'bigint', 'bigint'];
const INSERT_PODS = `INSERT INTO workload_pods (${POD_COLUMNS.join(', ')}) ${unnest(POD_TYPES)}`;
const POD_CONFLICT: Record<WriteMode, string> = {
  insert: 'ON CONFLICT (pod_uid, submitted_at) DO NOTHING',
  replace: `ON CONFLICT (pod_uid, submitted_at) DO UPDATE SET
    workload_id = excluded.workload_id, gpus = excluded.gpus, started_at = excluded.started_at, finished_at = excluded.finished_at`,
};

const LIFETIME_COLUMNS = [
  'workload_id', 'metric', 'sample_count', 'sum', 'min', 'max', 'current',
] as const satisfies readonly (keyof SourceLifetime)[];
const INSERT_LIFETIMES = `INSERT INTO workload_gpu_lifetime (${LIFETIME_COLUMNS.join(', ')}, last_minute)
  SELECT *, $8::bigint FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[], $5::float8[], $6::float8[], $7::float8[])`;
const LIFETIME_CONFLICT: Record<WriteMode, string> = {
  insert: 'ON CONFLICT (workload_id, metric) DO NOTHING',
  replace: `ON CONFLICT (workload_id, metric) DO UPDATE SET
    sample_count = excluded.sample_count, sum = excluded.sum, min = excluded.min, max = excluded.max, current = excluded.current,
    last_minute = excluded.last_minute`,
};

// Usage without its keys: the rollups phase sets them from the target's rows and sums the rollup.
const USAGE_COLUMNS = ['workload_id', ...USAGE_FIGURES] as const;
const INSERT_USAGE = `INSERT INTO workload_usage (${USAGE_COLUMNS.join(', ')}) ${unnest(['text', ...USAGE_FIGURES.map(() => 'bigint')])}`;
const USAGE_CONFLICT: Record<WriteMode, string> = {
  insert: 'ON CONFLICT (workload_id) DO NOTHING',
  replace: `ON CONFLICT (workload_id) DO UPDATE SET ${USAGE_FIGURES.map((f) => `${f} = excluded.${f}`).join(', ')}`,
};

const columns = <Row, Column extends keyof Row>(rows: readonly Row[], names: readonly Column[]) =>
  names.map((name) => rows.map((row) => row[name]));

async function writeWorkloads(client: Queryable, rows: readonly SourceWorkload[], mode: WriteMode): Promise<void> {
  if (mode === 'replace') {
    const ids = rows.map((row) => row.workload_id);
    await client.query(DELETE_PODS_OF, [ids]);
    await client.query(DELETE_MOVED, [ids, rows.map((row) => row.submitted_at)]);
  }
  await client.query(`${INSERT_WORKLOADS} ${WORKLOAD_CONFLICT[mode]}`, columns(rows, WORKLOAD_COLUMNS));
}

async function writePods(client: Queryable, rows: readonly SourcePod[], mode: WriteMode): Promise<void> {
  await client.query(`${INSERT_PODS} ${POD_CONFLICT[mode]}`, columns(rows, POD_COLUMNS));
}

/**
 * PostgreSQL's totals carry the last minute summed into them (last_minute, NOT NULL), so that a
 * retried flush adds nothing twice; copied totals get the cut-over minute, after every sample that
 * SQLite summed.
 */
async function writeLifetimes(client: Queryable, rows: readonly SourceLifetime[], mode: WriteMode, lastMinute: number): Promise<void> {
  await client.query(`${INSERT_LIFETIMES} ${LIFETIME_CONFLICT[mode]}`, [...columns(rows, LIFETIME_COLUMNS), lastMinute]);
}

async function writeUsage(client: Queryable, rows: readonly SourceUsage[], mode: WriteMode): Promise<void> {
  await client.query(`${INSERT_USAGE} ${USAGE_CONFLICT[mode]}`, columns(rows, USAGE_COLUMNS));
}

// The source's rows are what they are, not additions: the target takes them as they are (the writer's
// additive upsert, on a row the copy deleted first).
const FLEET_ROW_TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'float8', 'float8', 'float8', 'float8'];
const FLEET_KEYS = 'SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[])';
const DELETE_FLEET = {
  hour: `DELETE FROM fleet_hours WHERE (organization_id, hour, cluster_id, node) IN (${FLEET_KEYS})`,
  day: `DELETE FROM fleet_days WHERE (organization_id, day, cluster_id, node) IN (${FLEET_KEYS})`,
} as const;
const SET_MARKS = `INSERT INTO fleet_marks (cluster_id, covered_to) SELECT * FROM unnest($1::text[], $2::bigint[])
  ON CONFLICT (cluster_id) DO UPDATE SET covered_to = excluded.covered_to`;

async function writeFleet(client: Queryable, rows: readonly SourceFleetRow[]): Promise<void> {
  for (const grain of ['hour', 'day'] as const) {
    const ofGrain = rows.filter((row) => row.grain === grain);
    if (ofGrain.length === 0) continue;
    const keys = columns(ofGrain, ['organization_id', 'at', 'cluster_id', 'node'] as const);
    await client.query(DELETE_FLEET[grain], keys);
    const values = columns(ofGrain, [
      'organization_id', 'at', 'cluster_id', 'node', 'gpu_model', 'instance_type', 'capacity_type',
      'capacity_ms', 'unavailable_ms', 'allocated_ms', 'idle_ms',
    ] as const);
    await client.query(addFleetRowSql(grain, unnest(FLEET_ROW_TYPES)), values);
  }
}

async function writeFleetMarks(client: Queryable, marks: readonly { cluster_id: string; covered_to: number }[]): Promise<void> {
  if (marks.length > 0) await client.query(SET_MARKS, [marks.map((m) => m.cluster_id), marks.map((m) => m.covered_to)]);
}

export const chunkWriter = {
  fleet: writeFleet,
  fleetMarks: writeFleetMarks,
  workloads: writeWorkloads,
  pods: writePods,
  lifetimes: writeLifetimes,
  usage: writeUsage,
};
