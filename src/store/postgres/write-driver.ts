// The writer's driver on PostgreSQL (src/store/writes/write-driver.ts): a cluster's writes run on the
// connection that holds its write lock, each transaction opening with the epoch fence (lease.ts);
// retention and the gpu_error rewrites of the bucket writer run on a connection of the pool. Each
// step is one statement per table over arrays (unnest), rows in their month's partition: a pod lives
// in its workload's month (it carries the workload's submitted_at), found through the key tables.
import type pg from 'pg';
import { POSTGRES } from '../sql/dialect.js';
import { addFleetRowSql, type FleetGrain } from '../sql/fleet-ledger-sql.js';
import { AGGREGATE_COLUMNS, RECORD_COLUMNS, type GpuAggregates } from '../rows/row-mapping.js';
import type { PodRow } from '../rows/write-rules.js';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource } from '../rollups/definitions.js';
import type { RollupDelta } from '../rollups/deltas.js';
import type { ExpiredBatch, FleetTime, PodWrite, RowWrite, StoredRow, WriteDriver, WriteTransaction } from '../writes/write-driver.js';
import { ClientReader } from './executor.js';
import { LOCK_CLASS } from './locks.js';
import { monthStart, nextMonthStart } from './partitions.js';
import { applyRollupDeltas } from './rollup-apply.js';
import { deleteUsage, syncUsageKeys } from './usage-writes.js';

const STORED_COLUMNS = [...RECORD_COLUMNS, ...AGGREGATE_COLUMNS];
const SELECT_STORED = `SELECT ${STORED_COLUMNS.join(', ')} FROM workloads`;

const COLUMN_TYPES: Record<(typeof RECORD_COLUMNS)[number] | (typeof AGGREGATE_COLUMNS)[number] | 'updated_at', string> = {
  workload_id: 'text', organization_id: 'text', cluster_id: 'text', namespace: 'text', name: 'text', kind: 'text', status: 'text',
  submitted_by: 'text', initiative_id: 'text', instance_type: 'text', gpu_count: 'int', submitted_at: 'bigint', started_at: 'bigint',
  completed_at: 'bigint', exit_code: 'int', is_managed: 'smallint', resource_version: 'text', failure_reason: 'text', updated_at: 'bigint',
  allocated_gpus: 'float8', gpu_sharing: 'text', gpu_model: 'text', capacity_type: 'text',
  gpu_seconds_closed: 'float8', open_gpus: 'float8', open_gpu_start_sum: 'float8',
};

// A whole row, its GPU aggregates included: the writer decided every column.
const WRITTEN_COLUMNS = [...RECORD_COLUMNS, 'updated_at', ...AGGREGATE_COLUMNS] as const;
const UPSERT_WORKLOADS = `
  INSERT INTO workloads (${WRITTEN_COLUMNS.join(', ')})
  SELECT * FROM unnest(${WRITTEN_COLUMNS.map((c, i) => `$${i + 1}::${COLUMN_TYPES[c]}[]`).join(', ')})
  ON CONFLICT (workload_id, submitted_at) DO UPDATE SET
    ${WRITTEN_COLUMNS.filter((c) => c !== 'workload_id' && c !== 'submitted_at').map((c) => `${c} = excluded.${c}`).join(', ')}`;

const SELECT_POD_COLUMNS = 'SELECT pod_uid, workload_id, submitted_at, gpus, started_at, finished_at FROM workload_pods';
const DELETE_PODS = 'DELETE FROM workload_pods WHERE (pod_uid, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))';
const UPSERT_PODS = `
  INSERT INTO workload_pods (pod_uid, workload_id, submitted_at, gpus, started_at, finished_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[], $5::bigint[], $6::bigint[])
  ON CONFLICT (pod_uid, submitted_at) DO UPDATE SET
    workload_id = excluded.workload_id, gpus = excluded.gpus, started_at = excluded.started_at, finished_at = excluded.finished_at`;

// The GPU-time aggregates of each workload from its started pods (its own month: pods carry their
// workload's submitted_at), summed in GPU-ms and then divided, so that whole-GPU figures are exact
// (integers in float8, below 2^53); shares of a GPU (schema v12) are exact to float8's precision.
const CLOSED_GPU_MS = 'SUM(CASE WHEN p.finished_at IS NOT NULL THEN p.gpus * GREATEST(0, p.finished_at - p.started_at) END)';
const READ_AGGREGATES = `
  SELECT ids.workload_id, a.closed AS gpu_seconds_closed, a.open_gpus, a.open_start AS open_gpu_start_sum
  FROM unnest($1::text[], $2::bigint[]) AS ids (workload_id, submitted_at)
  CROSS JOIN LATERAL (
    SELECT COALESCE(${CLOSED_GPU_MS}, 0)::float8 / 1000 AS closed,
           COALESCE(SUM(CASE WHEN p.finished_at IS NULL THEN p.gpus END), 0)::float8 AS open_gpus,
           COALESCE(SUM(CASE WHEN p.finished_at IS NULL THEN p.gpus * p.started_at END), 0)::float8 / 1000 AS open_start
    FROM workload_pods p
    WHERE p.workload_id = ids.workload_id AND p.submitted_at = ids.submitted_at AND p.started_at IS NOT NULL) AS a`;

const CLOSE_OPEN_PODS = `
  UPDATE workload_pods SET finished_at = $2
  WHERE workload_id = ANY($1::text[]) AND submitted_at = ANY($3::bigint[]) AND finished_at IS NULL
  RETURNING workload_id`;

// Where the rows of these ids live (migrations.ts v3): one primary-key probe each, new ids included.
const WORKLOAD_MONTHS = 'SELECT workload_id AS id, submitted_at FROM workload_keys WHERE workload_id = ANY($1::text[])';
const POD_MONTHS = 'SELECT pod_uid AS id, submitted_at FROM pod_keys WHERE pod_uid = ANY($1::text[])';
// One month's partition, pruned when planned: a bound range rather than a join on the keys, which
// the planner may turn into a hash join over every month (it cannot cost the per-row pruning).
const IN_MONTH = 'submitted_at >= $2 AND submitted_at < $3';
const LOCK_IN_MONTH = `${SELECT_STORED} WHERE workload_id = ANY($1::text[]) AND ${IN_MONTH} ORDER BY workload_id FOR UPDATE`;
const PODS_IN_MONTH = `${SELECT_POD_COLUMNS} WHERE pod_uid = ANY($1::text[]) AND ${IN_MONTH}`;

// Retention: one batch at a time across replicas (a transaction-level advisory lock, (1735, -1)); a
// replica that finds it taken skips its turn. Rows are locked with SKIP LOCKED so that a batch never
// waits behind a cluster's writer.
const RETENTION_LOCK = `SELECT pg_try_advisory_xact_lock(${LOCK_CLASS}, -1) AS locked`;
const EXPIRED = `
  SELECT workload_id, ${ROLLUP_SOURCE_COLUMNS.filter((c) => c !== 'submitted_at').join(', ')}, submitted_at FROM workloads
  WHERE completed_at < $1 AND status IN ('completed', 'failed', 'cancelled')
  ORDER BY completed_at LIMIT $2 FOR UPDATE SKIP LOCKED`;
/** The rows of these keys, the pairs as two arrays: $1 the ids, $2 their months. */
const IN_KEYS = '(workload_id, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))';
const DELETE_WORKLOAD_PODS = `DELETE FROM workload_pods WHERE ${IN_KEYS}`;
const DELETE_ROWS = `DELETE FROM workloads WHERE ${IN_KEYS}`;
const DELETE_LIFETIMES = 'DELETE FROM workload_gpu_lifetime WHERE workload_id = ANY($1::text[])';

type StoredPod = PodRow & { submitted_at: number };

// Each key once per statement (ON CONFLICT cannot change a row twice): the writer sums them first.
const FLEET_ARRAYS = 'SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], ' +
  '$8::float8[], $9::float8[], $10::float8[], $11::float8[])';
const ADD_FLEET_ROWS: Record<FleetGrain, string> = { hour: addFleetRowSql('hour', FLEET_ARRAYS), day: addFleetRowSql('day', FLEET_ARRAYS) };
// The mark's row is locked: a writer fenced out in the middle of its transaction cannot interleave.
const FLEET_MARK_FOR_UPDATE = 'SELECT covered_to FROM fleet_marks WHERE cluster_id = $1 FOR UPDATE';
const SET_FLEET_MARK = `INSERT INTO fleet_marks (cluster_id, covered_to) VALUES ($1, $2)
  ON CONFLICT (cluster_id) DO UPDATE SET covered_to = excluded.covered_to`;
const EXPIRE_FLEET: Record<FleetGrain, string> = {
  hour: 'DELETE FROM fleet_hours WHERE ctid IN (SELECT ctid FROM fleet_hours WHERE hour < $1 ORDER BY hour LIMIT $2)',
  day: 'DELETE FROM fleet_days WHERE ctid IN (SELECT ctid FROM fleet_days WHERE day < $1 ORDER BY day LIMIT $2)',
};

class PostgresWriteTransaction implements WriteTransaction {
  readonly reader: ClientReader;
  readonly #client: pg.ClientBase;
  /** The pods read by storedPods, with their months: a pod whose owner is in another month now leaves its old one. */
  readonly #pods = new Map<string, StoredPod>();

  constructor(client: pg.ClientBase) {
    this.#client = client;
    this.reader = new ClientReader(client, null);
  }

  async storedPods(podUids: readonly string[]): Promise<Map<string, PodRow>> {
    for (const [start, inMonth] of await this.#idsByMonth(POD_MONTHS, podUids)) {
      const { rows } = await this.#client.query<StoredPod>(PODS_IN_MONTH, [inMonth, start, nextMonthStart(start)]);
      for (const pod of rows) this.#pods.set(pod.pod_uid, pod);
    }
    return new Map(this.#pods);
  }

  /**
   * Their months from the keys, then one statement per month (a batch is mostly this month's rows).
   * Before the keys, a lookup probed every month's primary key: 110 ms for 500 ids over 18 months,
   * against 1 + 5 ms. Rows are locked in id order within each month; the cluster's rows have one
   * writer, and retention skips locked rows, so this cannot deadlock with another transaction.
   */
  async lockRows(workloadIds: readonly string[]): Promise<Map<string, StoredRow>> {
    const found = new Map<string, StoredRow>();
    for (const [start, inMonth] of await this.#idsByMonth(WORKLOAD_MONTHS, workloadIds)) {
      const { rows } = await this.#client.query<StoredRow>(LOCK_IN_MONTH, [inMonth, start, nextMonthStart(start)]);
      for (const row of rows) found.set(row.workload_id, row);
    }
    return found;
  }

  async writePods(pods: readonly PodWrite[]): Promise<void> {
    const upserts = pods.map(({ pod, owner }) => ({ ...pod, submitted_at: owner.submitted_at }));
    const moved = upserts.flatMap((pod) => {
      const before = this.#pods.get(pod.pod_uid);
      return before !== undefined && before.submitted_at !== pod.submitted_at ? [before] : [];
    });
    if (moved.length > 0) await this.#client.query(DELETE_PODS, [moved.map((p) => p.pod_uid), moved.map((p) => p.submitted_at)]);
    await this.#client.query(UPSERT_PODS, [
      upserts.map((p) => p.pod_uid), upserts.map((p) => p.workload_id), upserts.map((p) => p.submitted_at),
      upserts.map((p) => p.gpus), upserts.map((p) => p.started_at), upserts.map((p) => p.finished_at),
    ]);
  }

  async aggregatesOf(rows: readonly StoredRow[]): Promise<Map<string, GpuAggregates>> {
    const { rows: sums } = await this.#client.query<GpuAggregates & { workload_id: string }>(
      READ_AGGREGATES,
      [rows.map((w) => w.workload_id), rows.map((w) => w.submitted_at)],
    );
    return new Map(sums.map(({ workload_id: id, ...aggregates }) => [id, aggregates]));
  }

  async writeRows(rows: readonly RowWrite[], updatedAt: number): Promise<void> {
    const columns = WRITTEN_COLUMNS.map((c) => rows.map(({ row }) => (c === 'updated_at' ? updatedAt : row[c])));
    await this.#client.query(UPSERT_WORKLOADS, columns);
  }

  async closePods(rows: readonly StoredRow[], at: number): Promise<{ closed: number; workloadIds: Set<string> }> {
    // Pods carry their workload's submitted_at: only those months' partitions are read.
    const months = [...new Set(rows.map((w) => w.submitted_at))];
    const result = await this.#client.query<{ workload_id: string }>(CLOSE_OPEN_PODS, [rows.map((w) => w.workload_id), at, months]);
    return { closed: result.rowCount ?? 0, workloadIds: new Set(result.rows.map((row) => row.workload_id)) };
  }

  async addRollups(deltas: readonly RollupDelta[]): Promise<void> {
    await applyRollupDeltas(this.#client, deltas);
  }

  async moveUsage(rows: readonly StoredRow[]): Promise<void> {
    await syncUsageKeys(this.#client, rows);
  }

  async expired(cutoffMs: number, limit: number): Promise<ExpiredBatch | null> {
    const locked = (await this.#client.query<{ locked: boolean }>(RETENTION_LOCK)).rows[0]?.locked === true;
    if (!locked) return null;
    const { rows } = await this.#client.query<RollupSource & { workload_id: string }>(EXPIRED, [cutoffMs, limit]);
    const ids = rows.map((row) => row.workload_id);
    const months = rows.map((row) => row.submitted_at);
    return {
      rows,
      remove: async () => {
        await this.#client.query(DELETE_WORKLOAD_PODS, [ids, months]);
        await this.#client.query(DELETE_ROWS, [ids, months]);
        await this.#client.query(DELETE_LIFETIMES, [ids]);
        return rows.length;
      },
      removeUsage: () => deleteUsage(this.#client, ids),
    };
  }

  async fleetMark(clusterId: string): Promise<number | null> {
    const { rows: [row] } = await this.#client.query<{ covered_to: number | string }>(FLEET_MARK_FOR_UPDATE, [clusterId]);
    return row === undefined ? null : Number(row.covered_to);
  }

  async addFleetTime(clusterId: string, time: FleetTime, mark: number): Promise<void> {
    for (const grain of ['hour', 'day'] as const) {
      const rows = grain === 'hour' ? time.hours : time.days;
      if (rows.length === 0) continue;
      await this.#client.query(ADD_FLEET_ROWS[grain], [
        rows.map((r) => r.organizationId), rows.map((r) => r.hour), rows.map((r) => r.clusterId), rows.map((r) => r.node),
        rows.map((r) => r.gpuModel), rows.map((r) => r.instanceType), rows.map((r) => r.capacityType), rows.map((r) => r.capacityMs),
        rows.map((r) => r.unavailableMs), rows.map((r) => r.allocatedMs), rows.map((r) => r.idleMs),
      ]);
    }
    await this.#client.query(SET_FLEET_MARK, [clusterId, mark]);
  }

  async expireFleetTime(cutoffMs: number, limit: number): Promise<number> {
    let deleted = 0;
    for (const grain of ['hour', 'day'] as const) {
      deleted += (await this.#client.query(EXPIRE_FLEET[grain], [cutoffMs, limit])).rowCount ?? 0;
    }
    return deleted;
  }

  /** The ids that have a row, grouped by the start of their row's month. */
  async #idsByMonth(sql: string, ids: readonly string[]): Promise<Map<number, string[]>> {
    const months = new Map<number, string[]>();
    if (ids.length === 0) return months;
    for (const { id, submitted_at } of (await this.#client.query<{ id: string; submitted_at: number }>(sql, [ids])).rows) {
      const start = monthStart(submitted_at);
      const inMonth = months.get(start);
      if (inMonth === undefined) months.set(start, [id]);
      else inMonth.push(id);
    }
    return months;
  }
}

/** How a driver gets its transactions: the lock's fenced connection, or one of the pool's. */
export interface PostgresTransactions {
  transaction<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T>;
  /** Before rows of these submission times are written: their months' partitions exist. */
  ensureMonths?(submittedAts: readonly number[]): Promise<void>;
}

export class PostgresWriteDriver implements WriteDriver {
  readonly dialect = POSTGRES;
  readonly stampsPodChanges = false;
  readonly #transactions: PostgresTransactions;

  constructor(transactions: PostgresTransactions) {
    this.#transactions = transactions;
  }

  async prepareRows(submittedAts: readonly number[]): Promise<void> {
    await this.#transactions.ensureMonths?.(submittedAts);
  }

  transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    return this.#transactions.transaction((client) => work(new PostgresWriteTransaction(client)));
  }
}
