// The SQLite index of workloads: the write side used by the indexer (and tests, benchmarks). The
// read side is src/store/reads/workload-index.ts over the connection (read-index.ts).
import type { Database } from 'better-sqlite3';
import { systemClock, type Clock } from '../../domain/clock.js';
import { UNKNOWN, type PodGpuInterval, type WorkloadRecord } from '../../domain/workload.js';
import { RECORD_COLUMNS, toRecord, toRow, type WorkloadRow } from '../common/row-mapping.js';
import { listUnfinished } from './unfinished.js';
import { mayBeGpuError } from '../common/gpu-error-reason.js';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource } from '../rollups/definitions.js';
import { refreshAggregates } from './gpu-aggregates.js';
import { applyGpuErrors } from './gpu-errors.js';
import { SOURCE_COLUMNS, SqliteRollups, type SourceRow } from './rollup-apply.js';
import { rowsWithPodsWriter } from './rows-with-pods.js';
import { StatementCache } from './workload-sql.js';

const MUTABLE_COLUMNS = RECORD_COLUMNS.filter((c) => c !== 'workload_id');

const FINISHED = "('completed', 'failed', 'cancelled')";

// What an update writes to each column (the write rules both backends keep, docs/workloads.md):
// - A known instance type is never replaced by `unknown`: a finished Job whose pods and node are gone
//   (garbage-collected, or deleted while the service was down) maps again at every relist, and after a
//   restart, with no node to read; rewriting its instance type would also move its GPU-hours out of
//   the capacity pool that counted them.
// - submitted_at never changes once written: without a creationTimestamp it falls back to the time
//   the object was observed, which differs between replicas and restarts (and on PostgreSQL it
//   picks the row's partition).
// - A finished row never goes back to pending or running: Kubernetes never takes a Job or Pod out of
//   a terminal state, so such an event is an older one (a replay, a lagging replica's cache), and its
//   status, times, exit code and resourceVersion are kept. A terminal event still replaces a
//   terminal row: a pod marked for deletion is cancelled with exit code 0 until its containers stop
//   (then 137), and a Job's exit code comes from pods that may arrive after its condition. Labels
//   always update.
// The PostgreSQL writer and writeWorkloads (rows-with-pods.ts) apply the same rules in code
// (common/write-rules.ts); the suites of test/store run on both backends.
const UPDATED_VALUE: Record<(typeof MUTABLE_COLUMNS)[number], string> = Object.fromEntries(
  MUTABLE_COLUMNS.map((c) => [c, `excluded.${c}`]),
) as Record<(typeof MUTABLE_COLUMNS)[number], string>;
UPDATED_VALUE.instance_type = `CASE WHEN excluded.instance_type = '${UNKNOWN}' THEN workloads.instance_type ELSE excluded.instance_type END`;
UPDATED_VALUE.submitted_at = 'workloads.submitted_at';
for (const column of ['status', 'started_at', 'completed_at', 'exit_code', 'failure_reason', 'resource_version'] as const) {
  UPDATED_VALUE[column] = `CASE WHEN workloads.status IN ${FINISHED} AND excluded.status NOT IN ${FINISHED} THEN workloads.${column} ELSE excluded.${column} END`;
}

// A relist or resync delivers every object again; rewriting identical rows would churn the WAL and
// every index. The resourceVersion alone is not enough to skip a row: initiative, organization and
// instance type come from the Namespace and the Node, which change without the Job or Pod changing.
// So a row from Kubernetes is skipped only when nothing it holds would change.
const UPSERT_WORKLOAD = `
  INSERT INTO workloads (${RECORD_COLUMNS.join(', ')}, updated_at)
  VALUES (${RECORD_COLUMNS.map((c) => `@${c}`).join(', ')}, @updated_at)
  ON CONFLICT (workload_id) DO UPDATE SET
    ${MUTABLE_COLUMNS.map((c) => `${c} = ${UPDATED_VALUE[c]}`).join(', ')}, updated_at = excluded.updated_at
  WHERE excluded.resource_version = ''
     OR (${MUTABLE_COLUMNS.map((c) => UPDATED_VALUE[c]).join(', ')}) IS NOT (${MUTABLE_COLUMNS.map((c) => `workloads.${c}`).join(', ')})
  RETURNING ${SOURCE_COLUMNS}`;

// Pods can be seen before their Job is; such intervals are skipped (no workloads row to select)
// rather than failing the batch on the foreign key, and arrive again with the pod's next event. An
// interval may move a pod to another workload (its owner was resolved differently); both workloads'
// aggregates then change, so the owners are read before the upserts (RETURNING would give only the new one).
// Once its workload is finished, a closed interval stays closed: a Job's pods outlive it while the
// garbage collector deletes them, and their events (still running) must not reopen what the Job's
// deletion or closeOpenIntervals closed. The rows of a flush are written before its intervals, so
// the status read here is the newest one. A later end still replaces an earlier one (finished_at
// does not only move earlier): a pod marked for deletion ends at the request until its containers
// stop, later, through the grace period; and a pod's own end replaces the time closeOpenIntervals
// closed its interval at.
const POD_OWNERS = 'SELECT pod_uid, workload_id FROM workload_pods WHERE pod_uid IN (SELECT value FROM json_each(@podUids))';
const UPSERT_POD = `
  INSERT INTO workload_pods (pod_uid, workload_id, gpus, started_at, finished_at)
  SELECT @podUid, @workloadId, @gpus, @startedAt, COALESCE(@finishedAt, (
    SELECT p.finished_at FROM workload_pods p WHERE p.pod_uid = @podUid AND w.status IN ${FINISHED}))
  FROM workloads w WHERE w.workload_id = @workloadId
  ON CONFLICT (pod_uid) DO UPDATE SET
    workload_id = excluded.workload_id, gpus = excluded.gpus, started_at = excluded.started_at, finished_at = excluded.finished_at
  WHERE (excluded.workload_id, excluded.gpus, excluded.started_at, excluded.finished_at)
    IS NOT (workload_pods.workload_id, workload_pods.gpus, workload_pods.started_at, workload_pods.finished_at)`;

// One statement for the whole list: the ids travel as one JSON array, so the SQL text stays the same.
const CLOSE_OPEN_PODS = `
  UPDATE workload_pods SET finished_at = @at
  WHERE workload_id IN (SELECT value FROM json_each(@ids)) AND finished_at IS NULL
  RETURNING workload_id`;

// One bounded batch per call, its own transaction. The batch bounds how long one call holds the
// thread (about 60 µs a workload with its pods and indexes) and the write lock. Nothing else of this
// process runs during a call, the indexer included (same thread, same connection): RetentionJob
// yields to the event loop between batches so that requests and writes interleave. The rows are
// read first, for the figures that leave the rollups with them, then deleted by rowid.
const FINISHED_BATCH = `
  SELECT rowid, ${ROLLUP_SOURCE_COLUMNS.join(', ')} FROM workloads
  WHERE completed_at < @cutoff AND status IN ${FINISHED}
  LIMIT @batchSize`;
const DELETE_ROWIDS = 'DELETE FROM workloads WHERE rowid IN (SELECT value FROM json_each(@rowids))';

export class SqliteWorkloadStore {
  readonly #statements: StatementCache;
  readonly #clock: Clock;
  readonly #upsertWorkloads: (records: readonly WorkloadRecord[]) => number;
  readonly #upsertPods: (intervals: readonly PodGpuInterval[]) => number;
  readonly #closeOpenPods: (workloadIds: readonly string[], at: number) => number;
  readonly #writeWorkloads: (records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]) => { rows: number; intervals: number };
  readonly #deleteFinished: (cutoff: number, batchSize: number) => number;
  readonly #rollups: SqliteRollups;

  constructor(db: Database, options: { clock?: Clock } = {}) {
    this.#statements = new StatementCache(db);
    this.#clock = options.clock ?? systemClock;
    this.#rollups = new SqliteRollups(db, this.#statements);
    // IMMEDIATE: the write lock is taken before the rows are read, so what is read before a write is
    // what the write changes.
    const upsertWorkloads = db.transaction((records: readonly WorkloadRecord[]) => {
      const before = this.#rollups.readSources(records.map((record) => record.workloadId));
      const statement = this.#statements.get(UPSERT_WORKLOAD);
      const updatedAt = this.#clock.now();
      const after = new Map<string, SourceRow>();
      let written = 0;
      const rows = records.map(toRow);
      applyGpuErrors(this.#statements, rows);
      for (const incoming of rows) {
        const row = statement.get({ ...incoming, updated_at: updatedAt }) as SourceRow | undefined;
        if (row === undefined) continue; // unchanged
        written += 1;
        after.set(row.workload_id, row);
      }
      this.#rollups.addChanges(before, after);
      return written;
    });
    this.#upsertWorkloads = (records) => upsertWorkloads.immediate(records);
    const upsertPods = db.transaction((intervals: readonly PodGpuInterval[]) => {
      // Every workload an interval may change: its own, and the one its pod belongs to now. A pod
      // passing through several workloads within the batch only passes through workloads of the batch.
      const owners = new Map(
        (this.#statements.get(POD_OWNERS).all({ podUids: JSON.stringify(intervals.map((i) => i.podUid)) }) as { pod_uid: string; workload_id: string }[])
          .map((row) => [row.pod_uid, row.workload_id]),
      );
      const before = this.#rollups.readSources([...new Set([...intervals.map((i) => i.workloadId), ...owners.values()])]);
      const upsert = this.#statements.get(UPSERT_POD);
      const touched = new Set<string>();
      let written = 0;
      for (const interval of intervals) {
        const changes = upsert.run(interval).changes;
        if (changes === 0) continue;
        written += changes;
        touched.add(interval.workloadId);
        const previous = owners.get(interval.podUid);
        if (previous !== undefined) touched.add(previous);
        owners.set(interval.podUid, interval.workloadId);
      }
      this.#rollups.addChanges(before, refreshAggregates(this.#statements, touched, this.#clock.now()));
      return written;
    });
    this.#upsertPods = (intervals) => upsertPods.immediate(intervals);
    const closeOpenPods = db.transaction((workloadIds: readonly string[], at: number) => {
      const before = this.#rollups.readSources(workloadIds);
      const closed = this.#statements.get(CLOSE_OPEN_PODS).all({ ids: JSON.stringify(workloadIds), at }) as { workload_id: string }[];
      const touched = new Set(closed.map((row) => row.workload_id));
      this.#rollups.addChanges(before, refreshAggregates(this.#statements, touched, this.#clock.now()));
      return closed.length;
    });
    this.#closeOpenPods = (workloadIds, at) => closeOpenPods.immediate(workloadIds, at);
    const deleteFinished = db.transaction((cutoff: number, batchSize: number) => {
      const rows = this.#statements.get(FINISHED_BATCH).all({ cutoff, batchSize }) as (RollupSource & { rowid: number })[];
      if (rows.length === 0) return 0;
      const deleted = this.#statements.get(DELETE_ROWIDS).run({ rowids: JSON.stringify(rows.map((row) => row.rowid)) }).changes;
      this.#rollups.addDeltas(rows, []);
      return deleted;
    });
    this.#deleteFinished = (cutoff, batchSize) => deleteFinished.immediate(cutoff, batchSize);
    this.#writeWorkloads = rowsWithPodsWriter(db, this.#statements, this.#rollups, this.#clock);
  }

  /** Inserts or updates rows in one transaction; returns how many were written (unchanged rows are not). */
  async upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number> {
    return records.length === 0 ? 0 : this.#upsertWorkloads(records);
  }

  /**
   * Inserts or updates pod intervals in one transaction and refreshes the GPU-hour aggregates of their
   * workloads, and of the workload a pod moved away from. Intervals of workloads not in the index yet
   * are skipped. Returns the intervals written.
   */
  async upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number> {
    return intervals.length === 0 ? 0 : this.#upsertPods(intervals);
  }

  /**
   * Rows, then pod intervals, in one transaction, each row written once with its GPU aggregates:
   * the tables end as upsertWorkloads(records) then upsertPodIntervals(intervals) leave them
   * (rows-with-pods.ts). Returns what those two calls would return.
   */
  async writeWorkloads(records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]): Promise<{ rows: number; intervals: number }> {
    return records.length === 0 && intervals.length === 0 ? { rows: 0, intervals: 0 } : this.#writeWorkloads(records, intervals);
  }

  /**
   * Ends every still open pod interval of these workloads at `at`, in one transaction, and refreshes
   * their GPU-hour aggregates; returns how many intervals it closed. For workloads that vanished
   * while the service was away: their pods' intervals may come from an earlier run of the service,
   * whose pods this run never sees, so only the store can close them.
   */
  async closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number> {
    return workloadIds.length === 0 ? 0 : this.#closeOpenPods(workloadIds, at);
  }

  /**
   * Deletes up to `limit` finished workloads completed before `cutoffMs` (and their pods); returns
   * how many it deleted. Fewer than `limit` means none is left. One batch, so that the caller can
   * yield between batches (RetentionJob).
   */
  async deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number> {
    if (!(Number.isInteger(limit) && limit > 0)) throw new Error(`Cannot delete finished workloads: "limit" must be a positive integer, got ${limit}`);
    return this.#deleteFinished(cutoffMs, limit);
  }

  countRows(): number {
    return (this.#statements.get('SELECT COUNT(*) AS n FROM workloads').get() as { n: number }).n;
  }

  /** Pending and running workloads of a cluster, for the indexer to reconcile after a relist. */
  listUnfinished(clusterId: string): WorkloadRecord[] {
    return listUnfinished(this.#statements, clusterId);
  }








  /**
   * After a save brought new XID errors for these workloads: rewrites those of their rows already
   * failed with a reason gpu_error outranks (common/gpu-error-reason.ts). Returns the rows written.
   */
  escalateGpuErrors(workloadIds: readonly string[]): number {
    if (workloadIds.length === 0) return 0;
    const rows = this.#statements.get(`SELECT ${RECORD_COLUMNS.join(', ')} FROM workloads WHERE workload_id IN (SELECT value FROM json_each(@ids))`)
      .all({ ids: JSON.stringify(workloadIds) }) as WorkloadRow[];
    const failed = rows.filter(mayBeGpuError);
    return failed.length === 0 ? 0 : this.#upsertWorkloads(failed.map(toRecord));
  }





}
