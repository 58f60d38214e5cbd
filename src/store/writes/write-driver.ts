// What the one writer of the index (workload-writer.ts) needs of a backend: the statements of one
// write transaction. The writer decides everything in code, the same for both (the merge rules, the
// plan, the GPU aggregates a row takes, gpu_error, the rollup deltas, whose usage moves); a driver
// only reads and writes what it is told, in the way its engine does best: SQLite one short statement
// per row in the process, rewriting only the index families that change; PostgreSQL one statement
// per table over arrays, each row in its month's partition, locked in id order.
import type { FleetHourRow } from '../../domain/fleet-ledger.js';
import type { RollupSource } from '../rollups/definitions.js';
import type { RollupDelta } from '../rollups/deltas.js';
import type { SqlDialect } from '../sql/dialect.js';
import type { GpuAggregates, WorkloadRow } from '../rows/row-mapping.js';
import type { PodRow } from '../rows/write-rules.js';
import type { SqlReader } from '../sql/executor.js';

/** A workloads row as stored: its record and its GPU aggregates. */
export type StoredRow = WorkloadRow & GpuAggregates;

/** A pod to write, with the row of its workload as it will be (PostgreSQL keeps a pod in its workload's month). */
export interface PodWrite {
  pod: PodRow;
  owner: StoredRow;
  /** Whether the owner's row is stored already (a new one is written after its pods). */
  ownerStored: boolean;
}

/** A row to write: `stored` when it exists; `aggregates` when its GPU aggregates are among what changes. */
export interface RowWrite {
  row: StoredRow;
  stored: StoredRow | undefined;
  aggregates: boolean;
}

/** Finished rows chosen for deletion, not deleted yet. */
export interface ExpiredBatch {
  rows: readonly (RollupSource & { workload_id: string })[];
  /** Deletes the rows with their pods and telemetry; returns how many rows went. */
  remove(): Promise<number>;
  /** Takes the deleted rows' usage out of its table and rollups (where a trigger does not). */
  removeUsage(): Promise<void>;
}

/** GPU time of the fleet to add: by hour, and the same summed by day. */
export interface FleetTime {
  hours: readonly FleetHourRow[];
  days: readonly FleetHourRow[];
}

/** The statements of one write transaction; each call runs inside it, in the order the writer makes them. */
export interface WriteTransaction {
  /** Runs the shared read queries (the dialect's) inside the transaction. */
  readonly reader: SqlReader;
  /** The stored pods of these uids. */
  storedPods(podUids: readonly string[]): Promise<Map<string, PodRow>>;
  /** The stored rows of these ids, held against other writers until the commit. */
  lockRows(workloadIds: readonly string[]): Promise<Map<string, StoredRow>>;
  writePods(pods: readonly PodWrite[]): Promise<void>;
  /** The GPU aggregates of these rows' workloads, summed from their pods as now written. */
  aggregatesOf(rows: readonly StoredRow[]): Promise<Map<string, GpuAggregates>>;
  writeRows(rows: readonly RowWrite[], updatedAt: number): Promise<void>;
  /** Ends the open pods of these rows' workloads at `at`: how many, and the workloads whose pods closed. */
  closePods(rows: readonly StoredRow[], at: number): Promise<{ closed: number; workloadIds: Set<string> }>;
  addRollups(deltas: readonly RollupDelta[]): Promise<void>;
  /** Places these rows' usage at their keys (their keys changed, or they are new). */
  moveUsage(rows: readonly StoredRow[]): Promise<void>;
  /** Up to `limit` finished rows completed before `cutoffMs`; null when another writer is deleting. */
  expired(cutoffMs: number, limit: number): Promise<ExpiredBatch | null>;
  /** The cluster's fleet mark, held against other writers until the commit; null before its first write. */
  fleetMark(clusterId: string): Promise<number | null>;
  /** Adds the hours to fleet_hours, the days to fleet_days (each key once), and sets the cluster's mark. */
  addFleetTime(clusterId: string, time: FleetTime, mark: number): Promise<void>;
  /** Deletes up to `limit` hour rows and `limit` day rows of the fleet's history from before `cutoffMs`; returns how many went. */
  expireFleetTime(cutoffMs: number, limit: number): Promise<number>;
}

export interface WriteDriver {
  readonly dialect: SqlDialect;
  /**
   * Whether every row whose pods changed is written again, its aggregates the same or not: SQLite's
   * updated_at marks each change of a row's pods, which is how a delta copy of the file finds them
   * (`gpucap migrate`). PostgreSQL, never a copy's source, writes a row only for a change it holds.
   */
  readonly stampsPodChanges: boolean;
  /** Before a transaction that writes rows of these submission times: PostgreSQL creates their months' partitions. */
  prepareRows?(submittedAts: readonly number[]): Promise<void>;
  transaction<T>(work: (tx: WriteTransaction) => Promise<T>): Promise<T>;
}
