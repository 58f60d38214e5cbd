// The writes of one cluster on PostgreSQL, through the connection that holds the cluster's write lock
// (lease.ts): every call is one transaction that opens with the epoch fence. Each transaction locks
// and reads the stored rows it may change (FOR UPDATE), decides in code what to write
// (shared/write-rules.ts), writes with one statement per table (arrays through unnest), reads the
// rows back, and adds the rollup deltas (src/store/rollups/) with one statement per rollup table.
// A retried or replayed call finds the rows as it would leave them and adds nothing.
//
// The pending and running rows of the cluster are loaded once, when the session starts, and kept in
// step with every commit: the indexer's reconcile reads them synchronously (WorkloadSink).
import type pg from 'pg';
import type { PodGpuInterval, WorkloadRecord } from '../../domain/workload.js';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource } from '../rollups/definitions.js';
import { rollupDeltas } from '../rollups/deltas.js';
import { AGGREGATE_COLUMNS, RECORD_COLUMNS, toRecord, toRow, type GpuAggregates, type WorkloadRow } from '../common/row-mapping.js';
import { planWrite, workloadsMet, type WritePlan } from '../common/write-plan.js';
import { mergeWorkload, type PodRow } from '../common/write-rules.js';
import type { FencedConnection } from './lease.js';
import { ensurePartitions, monthStart, nextMonthStart } from './partitions.js';
import { applyGpuErrors } from './gpu-errors.js';
import { applyRollupDeltas } from './rollup-apply.js';
import { usageKeysChanged } from '../rollups/usage-keys.js';
import { syncUsageKeys } from './usage-writes.js';

type StoredRow = WorkloadRow & GpuAggregates;

const STORED_COLUMNS = [...RECORD_COLUMNS, ...AGGREGATE_COLUMNS];
const SELECT_STORED = `SELECT ${STORED_COLUMNS.join(', ')} FROM workloads`;

const COLUMN_TYPES: Record<(typeof RECORD_COLUMNS)[number] | 'updated_at', string> = {
  workload_id: 'text', organization_id: 'text', cluster_id: 'text', namespace: 'text', name: 'text', kind: 'text', status: 'text',
  submitted_by: 'text', initiative_id: 'text', instance_type: 'text', gpu_count: 'int', submitted_at: 'bigint', started_at: 'bigint',
  completed_at: 'bigint', exit_code: 'int', is_managed: 'smallint', resource_version: 'text', failure_reason: 'text', updated_at: 'bigint',
};
const WRITTEN_COLUMNS = [...RECORD_COLUMNS, 'updated_at'] as const;
const UPSERT_WORKLOADS = `
  INSERT INTO workloads (${WRITTEN_COLUMNS.join(', ')})
  SELECT * FROM unnest(${WRITTEN_COLUMNS.map((c, i) => `$${i + 1}::${COLUMN_TYPES[c]}[]`).join(', ')})
  ON CONFLICT (workload_id, submitted_at) DO UPDATE SET
    ${WRITTEN_COLUMNS.filter((c) => c !== 'workload_id' && c !== 'submitted_at').map((c) => `${c} = excluded.${c}`).join(', ')}`;

// A whole row, its GPU aggregates included: the write of writeWorkloads(), which computed them.
const FULL_COLUMNS = [...WRITTEN_COLUMNS, ...AGGREGATE_COLUMNS] as const;
const FULL_COLUMN_TYPES = { ...COLUMN_TYPES, gpu_seconds_closed: 'float8', open_gpus: 'int', open_gpu_start_sum: 'float8' } as const;
const UPSERT_FULL_WORKLOADS = `
  INSERT INTO workloads (${FULL_COLUMNS.join(', ')})
  SELECT * FROM unnest(${FULL_COLUMNS.map((c, i) => `$${i + 1}::${FULL_COLUMN_TYPES[c]}[]`).join(', ')})
  ON CONFLICT (workload_id, submitted_at) DO UPDATE SET
    ${FULL_COLUMNS.filter((c) => c !== 'workload_id' && c !== 'submitted_at').map((c) => `${c} = excluded.${c}`).join(', ')}`;

const SELECT_POD_COLUMNS = 'SELECT pod_uid, workload_id, submitted_at, gpus, started_at, finished_at FROM workload_pods';
const DELETE_PODS = 'DELETE FROM workload_pods WHERE (pod_uid, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))';
const UPSERT_PODS = `
  INSERT INTO workload_pods (pod_uid, workload_id, submitted_at, gpus, started_at, finished_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::bigint[], $6::bigint[])
  ON CONFLICT (pod_uid, submitted_at) DO UPDATE SET
    workload_id = excluded.workload_id, gpus = excluded.gpus, started_at = excluded.started_at, finished_at = excluded.finished_at`;

// The GPU-time aggregates of each workload from its started pods (its own month: pods carry their
// workload's submitted_at), summed in whole GPU-ms and then divided, so that they are exact. A row
// whose aggregates stay the same (a pod not started yet, or deleted after it finished) is not
// written: an update rewrites the row and every index of it.
const AGGREGATES_OF_PODS = `
    SELECT COALESCE(SUM(CASE WHEN p.finished_at IS NOT NULL THEN p.gpus * GREATEST(0, p.finished_at - p.started_at) END), 0)::float8 / 1000 AS closed,
           COALESCE(SUM(CASE WHEN p.finished_at IS NULL THEN p.gpus END), 0)::int AS open_gpus,
           COALESCE(SUM(CASE WHEN p.finished_at IS NULL THEN p.gpus * p.started_at END), 0)::float8 / 1000 AS open_start
    FROM workload_pods p
    WHERE p.workload_id = ids.workload_id AND p.submitted_at = ids.submitted_at AND p.started_at IS NOT NULL`;
const REFRESH_AGGREGATES = `
  UPDATE workloads w SET gpu_seconds_closed = a.closed, open_gpus = a.open_gpus, open_gpu_start_sum = a.open_start, updated_at = $3
  FROM unnest($1::text[], $2::bigint[]) AS ids (workload_id, submitted_at)
  CROSS JOIN LATERAL (${AGGREGATES_OF_PODS}) AS a
  WHERE w.workload_id = ids.workload_id AND w.submitted_at = ids.submitted_at
    AND (w.gpu_seconds_closed, w.open_gpus, w.open_gpu_start_sum) IS DISTINCT FROM (a.closed, a.open_gpus, a.open_start)
  RETURNING ${STORED_COLUMNS.map((c) => `w.${c}`).join(', ')}`;
// The same aggregates, read to be written with the row (writeWorkloads).
const READ_AGGREGATES = `
  SELECT ids.workload_id, a.closed AS gpu_seconds_closed, a.open_gpus, a.open_start AS open_gpu_start_sum
  FROM unnest($1::text[], $2::bigint[]) AS ids (workload_id, submitted_at)
  CROSS JOIN LATERAL (${AGGREGATES_OF_PODS}) AS a`;

const CLOSE_OPEN_PODS = `
  UPDATE workload_pods SET finished_at = $2
  WHERE workload_id = ANY($1::text[]) AND submitted_at = ANY($3::bigint[]) AND finished_at IS NULL
  RETURNING workload_id, submitted_at`;

const UNFINISHED = `${SELECT_STORED} WHERE cluster_id = $1 AND status IN ('pending', 'running')`;

export interface WriterOptions {
  clock: { now(): number };
}

/** The WorkloadSink of one session; `listUnfinished` needs the rows loaded by `load()` first. */
export class PostgresWorkloadWriter {
  readonly #connection: FencedConnection;
  readonly #options: WriterOptions;
  /** Pending and running rows of this cluster, by id, as committed. */
  readonly #unfinished = new Map<string, WorkloadRecord>();
  /** Months known to have their partitions. */
  readonly #months = new Set<number>();

  constructor(connection: FencedConnection, options: WriterOptions) {
    this.#connection = connection;
    this.#options = options;
  }

  /** Loads the cluster's unfinished rows (at the start of the session). */
  async load(): Promise<this> {
    const rows = await this.#connection.transaction(async (client) => (await client.query<StoredRow>(UNFINISHED, [this.#connection.clusterId])).rows);
    for (const row of rows) this.#unfinished.set(row.workload_id, toRecord(row));
    return this;
  }

  listUnfinished(clusterId: string): WorkloadRecord[] {
    return clusterId === this.#connection.clusterId ? [...this.#unfinished.values()] : [];
  }

  async upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    // Later records of one id win, as successive upserts would.
    const incoming = new Map(records.map((record) => [record.workloadId, toRow(record)]));
    await this.#ensureMonths([...incoming.values()].map((row) => row.submitted_at));
    const updatedAt = this.#options.clock.now();
    const written = await this.#connection.transaction(async (client) => {
      const stored = await lockWorkloads(client, [...incoming.keys()]);
      const rows: StoredRow[] = [];
      for (const [id, row] of incoming) {
        const before = stored.get(id);
        const merged = mergeWorkload(before, row);
        if (merged === null) continue;
        rows.push({ ...merged, ...aggregatesOf(before) });
      }
      if (rows.length === 0) return rows;
      await applyGpuErrors(client, rows);
      await client.query(UPSERT_WORKLOADS, WRITTEN_COLUMNS.map((c) => rows.map((row) => (c === 'updated_at' ? updatedAt : row[c]))));
      await applyRollupDeltas(client, rollupDeltas(rows.flatMap((row) => sourceOf(stored.get(row.workload_id))), rows.flatMap(sourceOf)));
      await syncUsageKeys(client, rows.filter((row) => usageKeysChanged(stored.get(row.workload_id), row)));
      return rows;
    });
    this.#committed(written);
    return written.length;
  }

  async upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number> {
    if (intervals.length === 0) return 0;
    const incoming = new Map(intervals.map((interval) => [interval.podUid, interval]));
    const updatedAt = this.#options.clock.now();
    const { written, refreshed } = await this.#connection.transaction(async (client) => {
      const pods = await readPods(client, [...incoming.keys()]);
      const workloads = await lockWorkloads(client, [...workloadsMet([], [...incoming.values()], pods.values())]);
      const plan = planWrite(workloads, pods, [], [...incoming.values()]);
      const changes = podChanges(plan, pods, (id) => workloads.get(id));
      if (changes.upserts.length === 0) return { written: 0, refreshed: [] };
      await writePods(client, changes);
      const refreshed = await refreshAggregates(client, [...plan.touched].flatMap((id) => workloads.get(id) ?? []), updatedAt);
      return { written: changes.upserts.length, refreshed };
    });
    this.#committed(refreshed);
    return written;
  }

  /**
   * Rows and pod intervals in one transaction, each row written once with the GPU aggregates of its
   * pods: what upsertWorkloads then upsertPodIntervals write, where those rewrite a row whose pods
   * changed a second time (one index entry per index each time). An interval whose workload is
   * neither stored nor among `records` is skipped, as there.
   */
  async writeWorkloads(records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]): Promise<{ rows: number; intervals: number }> {
    if (records.length === 0 && intervals.length === 0) return { rows: 0, intervals: 0 };
    // Later records of one id, and later intervals of one pod, win.
    const incoming = [...new Map(records.map((record) => [record.workloadId, record])).values()];
    const incomingPods = [...new Map(intervals.map((interval) => [interval.podUid, interval])).values()];
    await this.#ensureMonths(incoming.map((record) => record.submittedAt));
    const updatedAt = this.#options.clock.now();
    const { rows, written } = await this.#connection.transaction(async (client) => {
      const pods = await readPods(client, incomingPods.map((interval) => interval.podUid));
      const stored = await lockWorkloads(client, [...workloadsMet(incoming, incomingPods, pods.values())]);
      const plan = planWrite(stored, pods, incoming, incomingPods);
      const next = new Map<string, StoredRow>();
      for (const [id, row] of plan.rows) next.set(id, { ...row, ...aggregatesOf(stored.get(id)) });
      const changes = podChanges(plan, pods, (id) => next.get(id) ?? stored.get(id));
      if (changes.upserts.length > 0) {
        await writePods(client, changes);
        const touched = [...plan.touched].flatMap((id) => next.get(id) ?? stored.get(id) ?? []);
        const { rows: sums } = await client.query<GpuAggregates & { workload_id: string }>(READ_AGGREGATES, [touched.map((w) => w.workload_id), touched.map((w) => w.submitted_at)]);
        for (const { workload_id: id, ...aggregates } of sums) {
          const base = next.get(id) ?? stored.get(id);
          if (base !== undefined && (next.has(id) || !sameAggregates(base, aggregates))) next.set(id, { ...base, ...aggregates });
        }
      }
      const rows = [...next.values()];
      if (rows.length > 0) {
        await applyGpuErrors(client, rows);
        await client.query(UPSERT_FULL_WORKLOADS, FULL_COLUMNS.map((c) => rows.map((row) => (c === 'updated_at' ? updatedAt : row[c]))));
        await applyRollupDeltas(client, rollupDeltas(rows.flatMap((row) => sourceOf(stored.get(row.workload_id))), rows.flatMap(sourceOf)));
        await syncUsageKeys(client, rows.filter((row) => usageKeysChanged(stored.get(row.workload_id), row)));
      }
      return { rows, written: plan.written };
    });
    this.#committed(rows);
    return written;
  }

  async closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number> {
    if (workloadIds.length === 0) return 0;
    const updatedAt = this.#options.clock.now();
    const { closed, refreshed } = await this.#connection.transaction(async (client) => {
      const workloads = await lockWorkloads(client, [...new Set(workloadIds)]);
      // Pods carry their workload's submitted_at: only those months' partitions are read.
      const months = [...new Set([...workloads.values()].map((w) => w.submitted_at))];
      const result = await client.query<{ workload_id: string }>(CLOSE_OPEN_PODS, [[...workloads.keys()], at, months]);
      const touched = new Set(result.rows.map((row) => row.workload_id));
      const refreshed = await refreshAggregates(client, [...touched].flatMap((id) => workloads.get(id) ?? []), updatedAt);
      return { closed: result.rowCount ?? 0, refreshed };
    });
    this.#committed(refreshed);
    return closed;
  }

  async #ensureMonths(times: readonly number[]): Promise<void> {
    const created = await this.#connection.outside((client) => ensurePartitions(client, times, { known: this.#months }));
    for (const month of created) this.#months.add(month);
  }

  #committed(rows: readonly StoredRow[]): void {
    for (const row of rows) {
      if (row.cluster_id !== this.#connection.clusterId) continue;
      if (row.status === 'pending' || row.status === 'running') this.#unfinished.set(row.workload_id, toRecord(row));
      else this.#unfinished.delete(row.workload_id);
    }
  }
}

// Where the rows of these ids live (migrations.ts v3): one primary-key probe each, new ids included.
const WORKLOAD_MONTHS = 'SELECT workload_id AS id, submitted_at FROM workload_keys WHERE workload_id = ANY($1::text[])';
const POD_MONTHS = 'SELECT pod_uid AS id, submitted_at FROM pod_keys WHERE pod_uid = ANY($1::text[])';
// One month's partition, pruned when planned: a bound range rather than a join on the keys, which
// the planner may turn into a hash join over every month (it cannot cost the per-row pruning).
const LOCK_IN_MONTH = `${SELECT_STORED} WHERE workload_id = ANY($1::text[]) AND submitted_at >= $2 AND submitted_at < $3 ORDER BY workload_id FOR UPDATE`;
const PODS_IN_MONTH = `${SELECT_POD_COLUMNS} WHERE pod_uid = ANY($1::text[]) AND submitted_at >= $2 AND submitted_at < $3`;

/** The ids that have a row, grouped by the start of their row's month. */
async function idsByMonth(client: pg.ClientBase, sql: string, ids: readonly string[]): Promise<Map<number, string[]>> {
  const months = new Map<number, string[]>();
  if (ids.length === 0) return months;
  for (const { id, submitted_at } of (await client.query<{ id: string; submitted_at: number }>(sql, [ids])).rows) {
    const start = monthStart(submitted_at);
    const inMonth = months.get(start);
    if (inMonth === undefined) months.set(start, [id]);
    else inMonth.push(id);
  }
  return months;
}

/**
 * The stored rows of these ids, locked until the transaction ends, by id: their months from the keys,
 * then one statement per month (a batch is mostly this month's rows). Before the keys, a lookup probed
 * every month's primary key: 110 ms for 500 ids over 18 months, against 1 + 5 ms. Rows are locked in
 * id order within each month; the cluster's rows have one writer, and retention skips locked rows, so
 * this cannot deadlock with another transaction.
 */
async function lockWorkloads(client: pg.ClientBase, ids: readonly string[]): Promise<Map<string, StoredRow>> {
  const found = new Map<string, StoredRow>();
  for (const [start, inMonth] of await idsByMonth(client, WORKLOAD_MONTHS, ids)) {
    const { rows } = await client.query<StoredRow>(LOCK_IN_MONTH, [inMonth, start, nextMonthStart(start)]);
    for (const row of rows) found.set(row.workload_id, row);
  }
  return found;
}

/** The stored pods of these uids, by uid (see lockWorkloads). */
async function readPods(client: pg.ClientBase, uids: readonly string[]): Promise<Map<string, StoredPod>> {
  const found = new Map<string, StoredPod>();
  for (const [start, inMonth] of await idsByMonth(client, POD_MONTHS, uids)) {
    const { rows } = await client.query<StoredPod>(PODS_IN_MONTH, [inMonth, start, nextMonthStart(start)]);
    for (const pod of rows) found.set(pod.pod_uid, pod);
  }
  return found;
}

type StoredPod = PodRow & { submitted_at: number };

/** What a batch of intervals changes: pods to upsert (in their owner's month), pods that left a month. */
interface PodChanges {
  upserts: StoredPod[];
  moved: { pod_uid: string; submitted_at: number }[];
}

/**
 * The pods of a plan (common/write-plan.ts) as they are written here: each in its owner's month (the
 * row as it will be), and a pod whose owner is of another month than before deleted from that one.
 */
function podChanges(plan: WritePlan, stored: ReadonlyMap<string, StoredPod>, ownerOf: (workloadId: string) => StoredRow | undefined): PodChanges {
  const changes: PodChanges = { upserts: [], moved: [] };
  for (const pod of plan.pods.values()) {
    // The plan writes no pod of a workload that neither is stored nor comes with the records.
    const owner = ownerOf(pod.workload_id);
    if (owner === undefined) throw new Error(`Cannot write pod ${pod.pod_uid}: its workload ${pod.workload_id} has no row`);
    const before = stored.get(pod.pod_uid);
    if (before !== undefined && before.submitted_at !== owner.submitted_at) changes.moved.push(before);
    changes.upserts.push({ ...pod, submitted_at: owner.submitted_at });
  }
  return changes;
}

async function writePods(client: pg.ClientBase, { upserts, moved }: PodChanges): Promise<void> {
  if (moved.length > 0) await client.query(DELETE_PODS, [moved.map((p) => p.pod_uid), moved.map((p) => p.submitted_at)]);
  await client.query(UPSERT_PODS, [
    upserts.map((p) => p.pod_uid), upserts.map((p) => p.workload_id), upserts.map((p) => p.submitted_at),
    upserts.map((p) => p.gpus), upserts.map((p) => p.started_at), upserts.map((p) => p.finished_at),
  ]);
}

function sameAggregates(row: GpuAggregates, aggregates: GpuAggregates): boolean {
  return row.gpu_seconds_closed === aggregates.gpu_seconds_closed && row.open_gpus === aggregates.open_gpus && row.open_gpu_start_sum === aggregates.open_gpu_start_sum;
}

/** Recomputes the aggregates of `workloads` from their pods and adds the rollup deltas; returns the rows that changed, after. */
async function refreshAggregates(client: pg.ClientBase, workloads: readonly StoredRow[], updatedAt: number): Promise<StoredRow[]> {
  if (workloads.length === 0) return [];
  const { rows } = await client.query<StoredRow>(REFRESH_AGGREGATES, [workloads.map((w) => w.workload_id), workloads.map((w) => w.submitted_at), updatedAt]);
  const changed = new Set(rows.map((row) => row.workload_id));
  const before = workloads.filter((w) => changed.has(w.workload_id));
  await applyRollupDeltas(client, rollupDeltas(before.flatMap(sourceOf), rows.flatMap(sourceOf)));
  return rows;
}

function aggregatesOf(row: StoredRow | undefined): GpuAggregates {
  return row === undefined
    ? { gpu_seconds_closed: 0, open_gpus: 0, open_gpu_start_sum: 0 }
    : { gpu_seconds_closed: row.gpu_seconds_closed, open_gpus: row.open_gpus, open_gpu_start_sum: row.open_gpu_start_sum };
}

function sourceOf(row: StoredRow | undefined): RollupSource[] {
  if (row === undefined) return [];
  const source = {} as Record<(typeof ROLLUP_SOURCE_COLUMNS)[number], unknown>;
  for (const column of ROLLUP_SOURCE_COLUMNS) source[column] = row[column];
  return [source as unknown as RollupSource];
}
