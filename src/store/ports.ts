// The index's write port, once: what a cluster's writer session, a seed writer and the retention job
// write through. Every layer that carries these writes elsewhere (the write worker's thread, a lease
// session) derives its methods from here rather than declaring them again.
import type { FleetLedgerWrite } from '../domain/fleet-ledger.js';
import type { PodGpuInterval, WorkloadRecord } from '../domain/workload.js';

/** The writes of workload rows and their pods' GPU intervals. */
export interface IndexWriter {
  /** Upserts rows in one transaction; returns how many changed. */
  upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number>;
  /**
   * Upserts pod intervals in one transaction; intervals of workloads not in the index are skipped,
   * and an interval of a finished workload that is closed stays closed.
   */
  upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number>;
  /**
   * Rows, then intervals, in one transaction: what upsertWorkloads then upsertPodIntervals do, with
   * each row written once (its GPU aggregates with it). Returns what those two calls would.
   */
  writeWorkloads(records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]): Promise<{ rows: number; intervals: number }>;
  /**
   * Ends every still open pod interval of these workloads at `at`, in one transaction; returns how
   * many it closed. Reaches the intervals of pods this process never saw (stored by an earlier run).
   */
  closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number>;
  /** Up to when the cluster's fleet history is written (epoch ms); null before its first write. */
  fleetLedgerMark(clusterId: string): Promise<number | null>;
  /**
   * Adds the hours of the fleet's history and moves the cluster's mark, in one transaction; rejects
   * (code 'FLEET_MARK_MOVED') without writing when the mark is no longer `expectedMark`. Returns the hours written.
   */
  writeFleetLedger(write: FleetLedgerWrite): Promise<number>;
}

/**
 * What a cluster's writer session hands the indexer: the writes, and the cluster's pending and
 * running rows, which it reconciles after a relist (read synchronously).
 */
export interface ClusterWrites extends IndexWriter {
  listUnfinished(clusterId: string): WorkloadRecord[];
}

/** Retention's write: one bounded batch per call, so that the job can yield between batches. */
export interface FinishedWorkloadPurger {
  /**
   * Deletes up to `limit` workloads finished before `cutoffMs`, and up to `limit` rows of the fleet's
   * history of each grain from before it; returns how many went. Fewer than `limit` means none is left.
   */
  deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number>;
}

/** Writes without a cluster's lock: tests and benchmarks seed an index with them. */
export interface SeedWriter extends IndexWriter, FinishedWorkloadPurger {}

/** The methods of IndexWriter, by name, for what forwards them (derived, never listed again). */
export const INDEX_WRITER_METHODS = [
  'upsertWorkloads', 'upsertPodIntervals', 'writeWorkloads', 'closeOpenIntervals', 'fleetLedgerMark', 'writeFleetLedger',
] as const satisfies readonly (keyof IndexWriter)[];
export type IndexWriterMethod = (typeof INDEX_WRITER_METHODS)[number];

// A method added to the port and not listed above fails the type check here.
const everyMethodListed: Exclude<keyof IndexWriter, IndexWriterMethod> extends never ? true : never = true;
void everyMethodListed;

/** The methods of SeedWriter, by name. */
export const SEED_WRITER_METHODS = [...INDEX_WRITER_METHODS, 'deleteFinishedBatch'] as const satisfies readonly (keyof SeedWriter)[];
export type SeedWriterMethod = (typeof SEED_WRITER_METHODS)[number];

/** The writes of `writer`, bound to it: what a session that writes through it hands on. */
export function boundWriter(writer: IndexWriter): IndexWriter {
  return forwarding(INDEX_WRITER_METHODS, (method, args) => Reflect.apply(writer[method], writer, args) as Promise<unknown>) as IndexWriter;
}

/** The writes of `writer` and its retention, bound to it. */
export function boundSeedWriter(writer: SeedWriter): SeedWriter {
  return forwarding(SEED_WRITER_METHODS, (method, args) => Reflect.apply(writer[method], writer, args) as Promise<unknown>) as SeedWriter;
}

/**
 * Writers whose every call is `call(method, args)` (the write worker's thread, a seed session). The
 * methods live on the prototype, made from the port's names, where a fault test stubs them.
 */
export class ForwardingSeedWriter {
  constructor(readonly call: (method: SeedWriterMethod, args: unknown[]) => Promise<unknown>) {}
}
for (const method of SEED_WRITER_METHODS) {
  Object.defineProperty(ForwardingSeedWriter.prototype, method, {
    value(this: ForwardingSeedWriter, ...args: unknown[]) {
      return this.call(method, args);
    },
    writable: true,
    configurable: true,
  });
}

export function forwardingSeedWriter(call: (method: SeedWriterMethod, args: unknown[]) => Promise<unknown>): SeedWriter {
  return new ForwardingSeedWriter(call) as unknown as SeedWriter;
}

/** An object with a method per name, each calling `call` with its name and arguments as they are. */
function forwarding<Method extends string>(
  methods: readonly Method[],
  call: (method: Method, args: unknown[]) => Promise<unknown>,
): object {
  const forwarded: Partial<Record<Method, (...args: unknown[]) => Promise<unknown>>> = {};
  for (const method of methods) forwarded[method] = (...args) => call(method, args);
  return forwarded;
}
