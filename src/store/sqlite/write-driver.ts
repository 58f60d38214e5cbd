// The writer's driver on SQLite (src/store/writes/write-driver.ts): one IMMEDIATE transaction per
// write, the write lock taken before the rows are read, so that what is read before a write is what
// the write changes. Each statement is short and prepared once: a row or a pod at a time, in the
// process, costs microseconds. Lists of ids travel as one JSON array, so the SQL text stays the same.
import type { FleetHourRow } from '../../domain/fleet-ledger.js';
import { SQLITE } from '../sql/dialect.js';
import { addFleetRowSql, FLEET_MARK_SQL, SET_FLEET_MARK_SQL, type FleetGrain } from '../sql/fleet-ledger-sql.js';
import { AGGREGATE_COLUMNS, RECORD_COLUMNS, type GpuAggregates } from '../rows/row-mapping.js';
import type { PodRow } from '../rows/write-rules.js';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource } from '../rollups/definitions.js';
import type { RollupDelta } from '../rollups/deltas.js';
import type { ExpiredBatch, FleetTime, PodWrite, RowWrite, StoredRow, WriteDriver, WriteTransaction } from '../writes/write-driver.js';
import type { Database } from './database.js';
import { SqliteExecutor, SqliteReader } from './executor.js';
import { AGGREGATES_OF_PODS } from './gpu-aggregates.js';
import { SqliteRollups } from './rollup-apply.js';
import { storedRowUpdateSql } from './stored-row-update.js';
import type { StatementCache } from './statement-cache.js';

const STORED_ROWS = `
  SELECT ${[...RECORD_COLUMNS, ...AGGREGATE_COLUMNS].join(', ')} FROM workloads
  WHERE workload_id IN (SELECT value FROM json_each(@ids))`;
const STORED_PODS = `
  SELECT pod_uid, workload_id, gpus, started_at, finished_at FROM workload_pods
  WHERE pod_uid IN (SELECT value FROM json_each(@uids))`;

// The writer has applied the write rules: each statement writes what it is given.
const UPSERT_POD = `
  INSERT INTO workload_pods (pod_uid, workload_id, gpus, started_at, finished_at)
  VALUES (@pod_uid, @workload_id, @gpus, @started_at, @finished_at)
  ON CONFLICT (pod_uid) DO UPDATE SET
    workload_id = excluded.workload_id, gpus = excluded.gpus, started_at = excluded.started_at, finished_at = excluded.finished_at`;

// A new row, with every column: the writer read the stored rows under the write lock.
const INSERTED_COLUMNS = [...RECORD_COLUMNS, ...AGGREGATE_COLUMNS, 'updated_at'];
const INSERT_ROW = `INSERT INTO workloads (${INSERTED_COLUMNS.join(', ')}) VALUES (${INSERTED_COLUMNS.map((c) => `@${c}`).join(', ')})`;

// A pod may be written before its workload's row is (a new row is written once, after its pods,
// with their aggregates): the foreign key is checked at the commit instead, where every pod the plan
// writes has its row. SQLite turns the setting off again at the end of the transaction.
const DEFER_FOREIGN_KEYS = 'PRAGMA defer_foreign_keys = ON';

const CLOSE_OPEN_PODS = `
  UPDATE workload_pods SET finished_at = @at
  WHERE workload_id IN (SELECT value FROM json_each(@ids)) AND finished_at IS NULL
  RETURNING workload_id`;

// The batch bounds how long one call holds the write lock (about 60 µs a workload with its pods and
// indexes). The rows are read first, for the figures that leave the rollups with them, then deleted
// by rowid; their pods, lifetime totals and usage go with them (foreign keys and triggers).
const FINISHED_BATCH = `
  SELECT rowid, workload_id, ${ROLLUP_SOURCE_COLUMNS.join(', ')} FROM workloads
  WHERE completed_at < @cutoff AND status IN ('completed', 'failed', 'cancelled')
  LIMIT @batchSize`;
const DELETE_ROWIDS = 'DELETE FROM workloads WHERE rowid IN (SELECT value FROM json_each(@rowids))';

const FLEET_ROW_VALUES = `VALUES (@organization_id, @at, @cluster_id, @node, @gpu_model, @instance_type, @capacity_type,
  @capacity_ms, @unavailable_ms, @allocated_ms, @idle_ms)`;
const ADD_FLEET_ROW: Record<FleetGrain, string> = {
  hour: addFleetRowSql('hour', FLEET_ROW_VALUES),
  day: addFleetRowSql('day', FLEET_ROW_VALUES),
};
// The age index (schema v14) finds the oldest rows; a batch bounds how long the write lock is held.
const EXPIRE_FLEET: Record<FleetGrain, string> = {
  hour: `DELETE FROM fleet_hours WHERE (organization_id, hour, cluster_id, node) IN
    (SELECT organization_id, hour, cluster_id, node FROM fleet_hours WHERE hour < @cutoff ORDER BY hour LIMIT @batchSize)`,
  day: `DELETE FROM fleet_days WHERE (organization_id, day, cluster_id, node) IN
    (SELECT organization_id, day, cluster_id, node FROM fleet_days WHERE day < @cutoff ORDER BY day LIMIT @batchSize)`,
};

class SqliteWriteTransaction implements WriteTransaction {
  readonly reader: SqliteReader;
  readonly #statements: StatementCache;
  readonly #rollups: SqliteRollups;

  constructor(statements: StatementCache, rollups: SqliteRollups) {
    this.reader = new SqliteReader(statements);
    this.#statements = statements;
    this.#rollups = rollups;
  }

  async storedPods(podUids: readonly string[]): Promise<Map<string, PodRow>> {
    if (podUids.length === 0) return new Map();
    const pods = this.#statements.get(STORED_PODS).all({ uids: JSON.stringify(podUids) }) as PodRow[];
    return new Map(pods.map((pod) => [pod.pod_uid, pod]));
  }

  async lockRows(workloadIds: readonly string[]): Promise<Map<string, StoredRow>> {
    if (workloadIds.length === 0) return new Map();
    const rows = this.#statements.get(STORED_ROWS).all({ ids: JSON.stringify(workloadIds) }) as StoredRow[];
    return new Map(rows.map((row) => [row.workload_id, row]));
  }

  async writePods(pods: readonly PodWrite[]): Promise<void> {
    if (pods.some((write) => !write.ownerStored)) this.#statements.get(DEFER_FOREIGN_KEYS).run();
    const upsert = this.#statements.get(UPSERT_POD);
    for (const { pod } of pods) upsert.run(pod);
  }

  async aggregatesOf(rows: readonly StoredRow[]): Promise<Map<string, GpuAggregates>> {
    const sum = this.#statements.get(AGGREGATES_OF_PODS);
    const sums = new Map<string, GpuAggregates>();
    for (const { workload_id: id } of rows) {
      const a = sum.get({ workload_id: id }) as { closed: number; open_gpus: number; open_start: number };
      sums.set(id, { gpu_seconds_closed: a.closed, open_gpus: a.open_gpus, open_gpu_start_sum: a.open_start });
    }
    return sums;
  }

  async writeRows(rows: readonly RowWrite[], updatedAt: number): Promise<void> {
    for (const { row, stored, aggregates } of rows) {
      const sql = stored === undefined ? INSERT_ROW : storedRowUpdateSql(stored, row, aggregates);
      this.#statements.get(sql).run({ ...row, updated_at: updatedAt });
    }
  }

  async closePods(rows: readonly StoredRow[], at: number): Promise<{ closed: number; workloadIds: Set<string> }> {
    if (rows.length === 0) return { closed: 0, workloadIds: new Set() };
    const ids = JSON.stringify(rows.map((row) => row.workload_id));
    const closed = this.#statements.get(CLOSE_OPEN_PODS).all({ ids, at }) as { workload_id: string }[];
    return { closed: closed.length, workloadIds: new Set(closed.map((row) => row.workload_id)) };
  }

  async addRollups(deltas: readonly RollupDelta[]): Promise<void> {
    this.#rollups.apply(deltas);
  }

  async moveUsage(rows: readonly StoredRow[]): Promise<void> {
    this.#rollups.placeUsage(rows.map((row) => row.workload_id));
  }

  async expired(cutoffMs: number, limit: number): Promise<ExpiredBatch> {
    const rows = this.#statements
      .get(FINISHED_BATCH)
      .all({ cutoff: cutoffMs, batchSize: limit }) as (RollupSource & { workload_id: string; rowid: number })[];
    return {
      rows,
      remove: async () => this.#statements.get(DELETE_ROWIDS).run({ rowids: JSON.stringify(rows.map((row) => row.rowid)) }).changes,
      // The usage triggers of schema v6 take it out with its row.
      removeUsage: async () => undefined,
    };
  }

  async fleetMark(clusterId: string): Promise<number | null> {
    const row = this.#statements.get(FLEET_MARK_SQL).get({ cluster_id: clusterId }) as { covered_to: number } | undefined;
    return row?.covered_to ?? null;
  }

  async addFleetTime(clusterId: string, time: FleetTime, mark: number): Promise<void> {
    for (const grain of ['hour', 'day'] as const) {
      const add = this.#statements.get(ADD_FLEET_ROW[grain]);
      for (const row of grain === 'hour' ? time.hours : time.days) add.run(fleetRowParams(row));
    }
    this.#statements.get(SET_FLEET_MARK_SQL).run({ cluster_id: clusterId, covered_to: mark });
  }

  async expireFleetTime(cutoffMs: number, limit: number): Promise<number> {
    let deleted = 0;
    for (const grain of ['hour', 'day'] as const) {
      deleted += this.#statements.get(EXPIRE_FLEET[grain]).run({ cutoff: cutoffMs, batchSize: limit }).changes;
    }
    return deleted;
  }
}

function fleetRowParams(row: FleetHourRow): Record<string, string | number | null> {
  return {
    organization_id: row.organizationId, at: row.hour, cluster_id: row.clusterId, node: row.node, gpu_model: row.gpuModel,
    instance_type: row.instanceType, capacity_type: row.capacityType, capacity_ms: row.capacityMs, unavailable_ms: row.unavailableMs,
    allocated_ms: row.allocatedMs, idle_ms: row.idleMs,
  };
}

export class SqliteWriteDriver implements WriteDriver {
  readonly dialect = SQLITE;
  readonly stampsPodChanges = true;
  readonly #executor: SqliteExecutor;
  readonly #transaction: SqliteWriteTransaction;
  readonly #db: Database;
  readonly #begin;
  readonly #commit;
  readonly #rollback;

  constructor(db: Database, executor: SqliteExecutor) {
    this.#db = db;
    this.#executor = executor;
    const statements = executor.reader.statements;
    this.#transaction = new SqliteWriteTransaction(statements, new SqliteRollups(statements));
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
  }

  /** Runs `work` in one IMMEDIATE transaction, once the connection's work before it has ended. */
  transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    return this.#executor.exclusive(async () => {
      this.#begin.run();
      try {
        const result = await work(this.#transaction);
        // A deferred foreign key that fails fails the COMMIT and leaves the transaction open.
        this.#commit.run();
        return result;
      } catch (error) {
        // Some errors (a full disk, an interrupt) end the transaction themselves.
        if (this.#db.inTransaction) this.#rollback.run();
        throw error;
      }
    });
  }
}
