// The one writer of the index, for both backends (the driver: write-driver.ts). Every call is one
// transaction that reads the stored rows and pods it may change, decides in code what to write (the
// merge rules and the plan, rows/write-rules.ts and write-plan.ts), writes the pods, then each row
// once with the GPU aggregates of its pods, and adds what the rows' change makes to the rollups
// (src/store/rollups/) and to where their usage is counted. Because the rollup deltas come from the
// stored rows, a retried or replayed call finds the rows as it would leave them and adds nothing:
// every write is idempotent and order-proof, so that a relist, a replay or a new writer whose cache
// lags the dead one's changes nothing it should not (docs/workloads.md, "Write rules").
import type { Clock } from '../../domain/clock.js';
import { daysOf, FleetMarkMoved, type FleetLedgerWrite } from '../../domain/fleet-ledger.js';
import type { PodGpuInterval, WorkloadRecord } from '../../domain/workload.js';
import { markGpuErrors, mayBeGpuError } from '../rows/gpu-error.js';
import type { GpuAggregates } from '../rows/row-mapping.js';
import { planWrite, workloadsMet, type WritePlan } from '../rows/write-plan.js';
import type { FinishedWorkloadPurger, IndexWriter } from '../ports.js';
import { ROLLUP_SOURCE_COLUMNS } from '../rollups/definitions.js';
import { rollupDeltas } from '../rollups/deltas.js';
import { usageKeysChanged } from '../rollups/usage-keys.js';
import type { PodWrite, RowWrite, StoredRow, WriteDriver, WriteTransaction } from './write-driver.js';

export interface WorkloadWriterOptions {
  clock: Clock;
  /** Told the rows of each committed transaction, as they were written (a session keeps its cluster's unfinished rows). */
  onCommit?: (rows: readonly StoredRow[]) => void;
}

interface RowsToWrite {
  /** The rows as they will be, by id. */
  next: Map<string, StoredRow>;
  stored: ReadonlyMap<string, StoredRow>;
  /** The ids whose aggregates were summed again. */
  summed: ReadonlySet<string>;
  gpuErrorsDecided?: boolean;
}

const NO_AGGREGATES: GpuAggregates = { gpu_seconds_closed: 0, open_gpus: 0, open_gpu_start_sum: 0 };

export class WorkloadWriter implements IndexWriter, FinishedWorkloadPurger {
  readonly #driver: WriteDriver;
  readonly #options: WorkloadWriterOptions;

  constructor(driver: WriteDriver, options: WorkloadWriterOptions) {
    this.#driver = driver;
    this.#options = options;
  }

  async upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number> {
    return records.length === 0 ? 0 : (await this.writeWorkloads(records, [])).rows;
  }

  async upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number> {
    return intervals.length === 0 ? 0 : (await this.writeWorkloads([], intervals)).intervals;
  }

  async writeWorkloads(
    records: readonly WorkloadRecord[],
    intervals: readonly PodGpuInterval[],
  ): Promise<{ rows: number; intervals: number }> {
    if (records.length === 0 && intervals.length === 0) return { rows: 0, intervals: 0 };
    if (records.length > 0) await this.#driver.prepareRows?.(records.map((record) => record.submittedAt));
    return this.#commit(async (tx) => {
      const pods = await tx.storedPods(intervals.map((interval) => interval.podUid));
      const stored = await tx.lockRows([...workloadsMet(records, intervals, pods.values())]);
      const plan = planWrite(stored, pods, records, intervals);
      const next = new Map<string, StoredRow>();
      for (const [id, row] of plan.rows) next.set(id, { ...row, ...aggregatesOf(stored.get(id)) });
      if (plan.pods.size > 0) await tx.writePods(podWrites(plan, stored, next));
      const summed = await this.#sumPods(tx, [...plan.touched].flatMap((id) => next.get(id) ?? stored.get(id) ?? []), next);
      await this.#writeRows(tx, { next, stored, summed });
      return { rows: [...next.values()], result: plan.written };
    });
  }

  async closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number> {
    if (workloadIds.length === 0) return 0;
    return this.#commit(async (tx) => {
      const stored = await tx.lockRows([...new Set(workloadIds)]);
      const { closed, workloadIds: touched } = await tx.closePods([...stored.values()], at);
      const next = new Map<string, StoredRow>();
      const summed = await this.#sumPods(tx, [...touched].flatMap((id) => stored.get(id) ?? []), next);
      await this.#writeRows(tx, { next, stored, summed });
      return { rows: [...next.values()], result: closed };
    });
  }

  async fleetLedgerMark(clusterId: string): Promise<number | null> {
    return this.#driver.transaction((tx) => tx.fleetMark(clusterId));
  }

  async writeFleetLedger(write: FleetLedgerWrite): Promise<number> {
    const problem = fleetWriteProblem(write);
    if (problem !== null) throw new Error(`Cannot write the fleet history of cluster "${write.clusterId}": ${problem}`);
    return this.#driver.transaction(async (tx) => {
      const found = await tx.fleetMark(write.clusterId);
      if (found !== write.expectedMark) throw new FleetMarkMoved(write.clusterId, write.expectedMark, found);
      await tx.addFleetTime(write.clusterId, { hours: write.hours, days: daysOf(write.hours) }, write.to);
      return write.hours.length;
    });
  }

  /**
   * After a save brought new XID errors for these workloads: rewrites those of their rows already
   * failed with a reason gpu_error outranks (rows/gpu-error.ts). Returns the rows written.
   */
  async escalateGpuErrors(workloadIds: readonly string[]): Promise<number> {
    if (workloadIds.length === 0) return 0;
    return this.#commit(async (tx) => {
      const stored = await tx.lockRows([...new Set(workloadIds)]);
      const candidates = [...stored.values()].filter(mayBeGpuError).map((row) => ({ ...row }));
      await markGpuErrors(candidates, { reader: tx.reader, dialect: this.#driver.dialect });
      const next = new Map(candidates.filter((row) => row.failure_reason === 'gpu_error').map((row) => [row.workload_id, row]));
      await this.#writeRows(tx, { next, stored, summed: new Set(), gpuErrorsDecided: true });
      return { rows: [...next.values()], result: next.size };
    });
  }

  /**
   * Deletes up to `limit` finished workloads completed before `cutoffMs` (with their pods, telemetry
   * and usage), taking them out of the rollups; returns how many it deleted. Fewer than `limit` means
   * none is left (or, on a shared database, that another replica is deleting a batch right now).
   */
  async deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number> {
    if (!(Number.isInteger(limit) && limit > 0)) {
      throw new Error(`Cannot delete finished workloads: "limit" must be a positive integer, got ${limit}`);
    }
    return this.#driver.transaction(async (tx) => {
      const fleetRows = await tx.expireFleetTime(cutoffMs, limit);
      const batch = await tx.expired(cutoffMs, limit);
      if (batch === null || batch.rows.length === 0) return fleetRows;
      const deleted = await batch.remove();
      await tx.addRollups(rollupDeltas(batch.rows, []));
      await batch.removeUsage();
      return Math.max(deleted, fleetRows);
    });
  }

  /** Runs `work` in one transaction; once it committed, tells onCommit the rows it wrote. */
  async #commit<T>(work: (tx: WriteTransaction) => Promise<{ rows: StoredRow[]; result: T }>): Promise<T> {
    const { rows, result } = await this.#driver.transaction(work);
    if (rows.length > 0) this.#options.onCommit?.(rows);
    return result;
  }

  /**
   * Sums the pods of `rows` again into `next` (each row as it will be written); returns the ids whose
   * aggregates are written. A row whose sums stay the same is written only where the driver stamps
   * every change of a row's pods.
   */
  async #sumPods(tx: WriteTransaction, rows: readonly StoredRow[], next: Map<string, StoredRow>): Promise<Set<string>> {
    const summed = new Set<string>();
    if (rows.length === 0) return summed;
    const byId = new Map(rows.map((row) => [row.workload_id, row]));
    for (const [id, aggregates] of await tx.aggregatesOf(rows)) {
      const base = next.get(id) ?? byId.get(id);
      if (base === undefined) continue;
      if (!next.has(id) && !this.#driver.stampsPodChanges && sameAggregates(base, aggregates)) continue;
      next.set(id, { ...base, ...aggregates });
      summed.add(id);
    }
    return summed;
  }

  /** Writes `next` over `stored`, with gpu_error decided, and adds what they change to the rollups and the usage placement. */
  async #writeRows(tx: WriteTransaction, rows: RowsToWrite): Promise<void> {
    const { next, stored, summed } = rows;
    if (next.size === 0) return;
    if (rows.gpuErrorsDecided !== true) await markGpuErrors(next.values(), { reader: tx.reader, dialect: this.#driver.dialect });
    const writes: RowWrite[] = [...next].map(([id, row]) => ({ row, stored: stored.get(id), aggregates: summed.has(id) }));
    await tx.writeRows(writes, this.#options.clock.now());
    // Most rewrites leave the rollup columns as they were (a new resourceVersion, exit code or name).
    const changed = writes.filter(({ row, stored: before }) => before === undefined || !sameRollupSource(before, row));
    const previous = changed.flatMap(({ stored: before }) => (before === undefined ? [] : [before]));
    await tx.addRollups(rollupDeltas(previous, changed.map(({ row }) => row)));
    const moved = writes.filter(({ row, stored: before }) => usageKeysChanged(before, row)).map(({ row }) => row);
    if (moved.length > 0) await tx.moveUsage(moved);
  }
}

/** What is wrong with a write of the fleet's history, or null: each hour of the cluster, each key once, the mark ahead. */
function fleetWriteProblem(write: FleetLedgerWrite): string | null {
  if (!(Number.isSafeInteger(write.to) && write.to % 1000 === 0)) return `its mark ${write.to} is not a whole second`;
  if (write.expectedMark !== null && write.to < write.expectedMark) return `its mark ${write.to} is before ${write.expectedMark}`;
  const keys = new Set<string>();
  for (const row of write.hours) {
    if (row.clusterId !== write.clusterId) return `an hour of node "${row.node}" is of cluster "${row.clusterId}"`;
    const values = [row.capacityMs, row.unavailableMs, row.allocatedMs, row.idleMs];
    if (!values.every((v) => Number.isFinite(v) && v >= 0)) {
      return `an hour of node "${row.node}" has a negative or non-finite GPU time`;
    }
    const key = `${row.organizationId}\u0000${row.hour}\u0000${row.node}`;
    if (keys.has(key)) return `node "${row.node}" has its hour ${row.hour} twice`;
    keys.add(key);
  }
  return null;
}

/** The pods of the plan, each with its owner as it will be. */
function podWrites(plan: WritePlan, stored: ReadonlyMap<string, StoredRow>, next: ReadonlyMap<string, StoredRow>): PodWrite[] {
  return [...plan.pods.values()].map((pod) => {
    const owner = next.get(pod.workload_id) ?? stored.get(pod.workload_id);
    // The plan writes no pod of a workload that neither is stored nor comes with the records.
    if (owner === undefined) throw new Error(`Cannot write pod ${pod.pod_uid}: its workload ${pod.workload_id} has no row`);
    return { pod, owner, ownerStored: stored.has(pod.workload_id) };
  });
}

function aggregatesOf(row: StoredRow | undefined): GpuAggregates {
  return row === undefined
    ? NO_AGGREGATES
    : { gpu_seconds_closed: row.gpu_seconds_closed, open_gpus: row.open_gpus, open_gpu_start_sum: row.open_gpu_start_sum };
}

function sameAggregates(row: GpuAggregates, aggregates: GpuAggregates): boolean {
  return row.gpu_seconds_closed === aggregates.gpu_seconds_closed && row.open_gpus === aggregates.open_gpus &&
    row.open_gpu_start_sum === aggregates.open_gpu_start_sum;
}

function sameRollupSource(before: StoredRow, after: StoredRow): boolean {
  return ROLLUP_SOURCE_COLUMNS.every((column) => before[column] === after[column]);
}
