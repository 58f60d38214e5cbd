// Rows straight into PostgreSQL's workloads and workload_pods, for the read tests: what the SQLite
// store holds after upserting the same records and intervals once each (temp-store.ts), without a
// writer. The GPU aggregates are computed here as SQLite's REFRESH_AGGREGATES computes them
// (src/store/writes/workload-writer.ts), to the last bit, and the rollups are then rebuilt from the
// rows (src/store/postgres/rollup-rebuild.ts).
import type pg from 'pg';
import { mulberry32 } from '../../sim/random.js';
import type { PodGpuInterval, WorkloadRecord, WorkloadStatus } from '../../src/domain/workload.js';
import { ensurePartitions } from '../../src/store/postgres/partitions.js';
import { rebuildRollups } from '../../src/store/postgres/rollup-rebuild.js';
import { RECORD_COLUMNS, toRow, type GpuAggregates } from '../../src/store/rows/row-mapping.js';
import { at, HOUR_MS } from './temp-store.js';

/**
 * SQLite's TOTAL() over doubles (func.c since 3.43: Kahan-Babuska-Neumaier summation, the error term
 * added at the end), so that a sum of several pods' GPU-seconds rounds as SQLite's does. A plain
 * left-to-right sum, like PostgreSQL's SUM(float8), can differ from it in the last bit from the
 * third term on.
 */
export function sqliteTotal(values: readonly number[]): number {
  let sum = 0;
  let error = 0;
  for (const value of values) {
    const t = sum + value;
    error += Math.abs(sum) > Math.abs(value) ? sum - t + value : value - t + sum;
    sum = t;
  }
  return sum + error;
}

/**
 * The aggregates REFRESH_AGGREGATES gives a workload of these pods: its started pods, in the order
 * SQLite reads them (the index workload_pods_workload: started_at, then finished_at with NULL first,
 * then gpus), closed ones summed into gpu_seconds_closed, open ones into open_gpus and
 * open_gpu_start_sum.
 */
export function podAggregates(pods: readonly PodGpuInterval[]): GpuAggregates {
  const started = pods
    .filter((p): p is PodGpuInterval & { startedAt: number } => p.startedAt !== null)
    .sort((a, b) => a.startedAt - b.startedAt || (a.finishedAt ?? -Infinity) - (b.finishedAt ?? -Infinity) || a.gpus - b.gpus);
  const closed = started.filter((p) => p.finishedAt !== null);
  const open = started.filter((p) => p.finishedAt === null);
  return {
    gpu_seconds_closed: sqliteTotal(closed.map((p) => (p.gpus * Math.max(0, (p.finishedAt ?? 0) - p.startedAt)) / 1000)),
    open_gpus: open.reduce((sum, p) => sum + p.gpus, 0),
    open_gpu_start_sum: sqliteTotal(open.map((p) => (p.gpus * p.startedAt) / 1000)),
  };
}

const CHUNK = 2_000;

/**
 * Inserts the workloads and the pods of those workloads (others are left out, as SQLite's upsert skips
 * them), creating their months' partitions first, then rebuilds the rollups. `client` is a dedicated
 * connection, not in a transaction. Pod uids and workload ids must be unique.
 */
export async function seedPostgres(client: pg.ClientBase, data: { workloads: readonly WorkloadRecord[]; pods: readonly PodGpuInterval[] }, updatedAt = 0): Promise<void> {
  const submitted = new Map(data.workloads.map((w) => [w.workloadId, w.submittedAt]));
  const pods = data.pods.filter((p) => submitted.has(p.workloadId));
  const podsOf = new Map<string, PodGpuInterval[]>();
  for (const pod of pods) podsOf.set(pod.workloadId, [...(podsOf.get(pod.workloadId) ?? []), pod]);
  await ensurePartitions(client, data.workloads.map((w) => w.submittedAt));

  const columns = [...RECORD_COLUMNS, 'gpu_seconds_closed', 'open_gpus', 'open_gpu_start_sum', 'updated_at'] as const;
  const types: Record<(typeof columns)[number], string> = {
    workload_id: 'text', organization_id: 'text', cluster_id: 'text', namespace: 'text', name: 'text', kind: 'text', status: 'text',
    submitted_by: 'text', initiative_id: 'text', instance_type: 'text', gpu_count: 'int', submitted_at: 'bigint', started_at: 'bigint',
    completed_at: 'bigint', exit_code: 'int', is_managed: 'smallint', resource_version: 'text', failure_reason: 'text',
    allocated_gpus: 'float8', gpu_sharing: 'text', gpu_model: 'text', capacity_type: 'text', gpu_seconds_closed: 'float8',
    open_gpus: 'float8', open_gpu_start_sum: 'float8', updated_at: 'bigint',
  };
  const unnest = `SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${types[c]}[]`).join(', ')})`;
  for (let i = 0; i < data.workloads.length; i += CHUNK) {
    const rows = data.workloads.slice(i, i + CHUNK).map((w) => ({ ...toRow(w), ...podAggregates(podsOf.get(w.workloadId) ?? []), updated_at: updatedAt }));
    await client.query(`INSERT INTO workloads (${columns.join(', ')}) ${unnest}`, columns.map((c) => rows.map((r) => r[c])));
  }
  for (let i = 0; i < pods.length; i += CHUNK) {
    const slice = pods.slice(i, i + CHUNK);
    await client.query(
      'INSERT INTO workload_pods (pod_uid, workload_id, submitted_at, gpus, started_at, finished_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[], $5::bigint[], $6::bigint[])',
      [slice.map((p) => p.podUid), slice.map((p) => p.workloadId), slice.map((p) => submitted.get(p.workloadId)), slice.map((p) => p.share ?? p.gpus), slice.map((p) => p.startedAt), slice.map((p) => p.finishedAt)],
    );
  }
  await rebuildRollups(client);
}

const DAY = 24 * HOUR_MS;

/** The time of reading: rows were submitted over the four months before it, some still run. */
export const GENERATED_NOW = at('2026-11-10T13:37:21.123Z');
const NOW = GENERATED_NOW;
const TEAMS = ['llm', 'vision', 'audio', 'infra', 'speech'] as const;
const USERS = ['alice', 'bob', 'carol', 'dan'] as const;
const TYPES_OF_INSTANCE = ['p5', 'a3', 'g6'] as const;

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/**
 * Workloads in their final state and their pods, with the shapes that make the figures hard: times on
 * and around midnight and month ends (partition bounds), ties in submitted_at across teams, running
 * workloads, pods still open after their workload completed, pods started after the completion or
 * after NOW (a cluster clock ahead), pods of 0 GPUs, several pods per workload, workloads that never
 * started.
 */
export function generate(
  seed: number,
  count: number,
  options: { openAfterCompletion?: number } = {},
): { workloads: WorkloadRecord[]; pods: PodGpuInterval[] } {
  const { openAfterCompletion = 0.15 } = options;
  const random = mulberry32(seed);
  const workloads: WorkloadRecord[] = [];
  const pods: PodGpuInterval[] = [];
  const start = at('2026-07-20T00:00:00Z');
  for (let i = 0; i < count; i += 1) {
    const roll = random();
    const submittedAt = roll < 0.05
      ? at('2026-10-01T00:00:00Z') - (random() < 0.5 ? 1 : 0) // a month's first or previous ms
      : roll < 0.1
        ? Math.floor((start + random() * (NOW - start)) / DAY) * DAY // midnight
        : roll < 0.2 && workloads.length > 0
          ? (workloads[workloads.length - 1]?.submittedAt ?? start) // a tie with the previous one
          : start + Math.floor(random() * (NOW - start - HOUR_MS));
    const statusRoll = random();
    const status: WorkloadStatus = statusRoll < 0.12 ? 'running' : statusRoll < 0.2 ? 'pending' : statusRoll < 0.7 ? 'completed' : statusRoll < 0.88 ? 'failed' : 'cancelled';
    const neverStarted = status === 'pending' || (status === 'cancelled' && random() < 0.5);
    const startedAt = neverStarted ? null : submittedAt + Math.floor(random() * 3 * HOUR_MS);
    const finished = status === 'completed' || status === 'failed' || status === 'cancelled';
    const completedAt = finished ? Math.min((startedAt ?? submittedAt) + Math.floor(random() * 40 * HOUR_MS), NOW - 1000) : null;
    const id = `w-${String(i).padStart(5, '0')}-${Math.floor(random() * 1e6).toString(36)}`;
    const gpuCount = pick(random, [0, 1, 2, 4, 8]);
    workloads.push({
      workloadId: id,
      organizationId: random() < 0.85 ? 'acme' : 'globex',
      clusterId: pick(random, ['east', 'west']),
      namespace: 'ns',
      name: `job-${i}`,
      kind: random() < 0.9 ? 'Job' : 'Pod',
      status,
      submittedBy: pick(random, USERS),
      initiativeId: pick(random, TEAMS),
      instanceType: pick(random, TYPES_OF_INSTANCE),
      gpuCount,
      submittedAt,
      startedAt,
      completedAt: completedAt !== null && startedAt !== null && completedAt < startedAt ? startedAt : completedAt,
      exitCode: finished ? (status === 'failed' ? 1 : 0) : null,
      failureReason: status === 'failed' ? pick(random, ['oom_killed', 'nonzero_exit', 'evicted'] as const) : status === 'cancelled' ? 'deleted' : null,
      isManaged: random() < 0.6,
      resourceVersion: String(i),
    });
    const end = workloads[workloads.length - 1]?.completedAt ?? null;
    if (startedAt === null) {
      if (random() < 0.5) pods.push({ podUid: `${id}-unscheduled`, workloadId: id, gpus: gpuCount, startedAt: null, finishedAt: null });
      continue;
    }
    // One to four pods one after the other; the last one open while the workload runs.
    const podCount = 1 + Math.floor(random() * 4);
    let from = startedAt;
    const until = end ?? NOW - Math.floor(random() * HOUR_MS);
    for (let k = 0; k < podCount; k += 1) {
      const last = k === podCount - 1;
      const to = last ? end : from + Math.floor((until - from) * random() * 0.6);
      // Now and then (openAfterCompletion of the time) a pod of a finished workload left open: it counts
      // up to the completion.
      const finishedAt = last && end !== null && random() < openAfterCompletion ? null : to;
      pods.push({ podUid: `${id}-pod-${k}`, workloadId: id, gpus: k === 0 ? gpuCount : pick(random, [0, 1, 3, 8]), startedAt: from, finishedAt });
      from = Math.min((to ?? until) + 7_000, until);
    }
    // A pod started after the workload completed, or after NOW (a cluster clock ahead).
    if (random() < 0.06) {
      const late = (end ?? NOW) + Math.floor(random() * 3 * HOUR_MS) + 1;
      pods.push({ podUid: `${id}-late`, workloadId: id, gpus: pick(random, [1, 2, 4]), startedAt: late, finishedAt: random() < 0.5 ? null : late + HOUR_MS });
    }
  }
  return { workloads, pods };
}

