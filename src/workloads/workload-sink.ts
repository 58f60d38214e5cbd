// The ports the indexer needs, owned here so that src/workloads/ imports no store and no client:
// the SQLite store satisfies WorkloadSink structurally.
import type { PodGpuInterval, WorkloadRecord } from '../domain/workload.js';

/** Where the indexer writes rows and intervals, and reads what it must reconcile after a relist. */
export interface WorkloadSink {
  /** Upserts rows in one transaction; returns how many changed. */
  upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number>;
  /**
   * Upserts pod intervals in one transaction; intervals of workloads not in the index are skipped,
   * and an interval of a finished workload that is closed stays closed.
   */
  upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number>;
  /**
   * Rows, then intervals, in one transaction: what upsertWorkloads then upsertPodIntervals do, with
   * each row written once (its GPU aggregates with it). A sink without it gets those two calls.
   */
  writeWorkloads?(records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]): Promise<{ rows: number; intervals: number }>;
  /**
   * Ends every still open pod interval of these workloads at `at`, in one transaction; returns how
   * many it closed. Reaches the intervals of pods this process never saw (stored by an earlier run).
   */
  closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number>;
  /** Pending and running rows of one cluster. */
  listUnfinished(clusterId: string): WorkloadRecord[];
}

/** The part of a pino logger the indexer uses. */
export interface IndexerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}
