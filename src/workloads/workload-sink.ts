// The ports the indexer needs, owned here so that src/workloads/ imports no store and no client:
// the SQLite store satisfies WorkloadSink structurally, the Reflector's events fit ResourceEvent.
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

/**
 * One change of a watched collection: the full list after a (re)list, or one object's change. A
 * LIST may come page by page: PAGE events, then a SYNC with `paged` whose snapshot is those pages
 * (snapshot-pages.ts gathers them).
 */
export type ResourceEvent<T> =
  /** `namespace`: the snapshot covers that namespace only (namespaced watches); objects elsewhere are untouched. */
  | { type: 'SYNC'; items: readonly T[]; resourceVersion?: string; namespace?: string; paged?: boolean }
  | { type: 'PAGE'; items: readonly T[]; first: boolean; namespace?: string }
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T; resourceVersion?: string };

/** A change, or a snapshot whole: what the caches take once a LIST's pages are gathered. */
export type WholeEvent<T> = Exclude<ResourceEvent<T>, { type: 'PAGE' }>;

/** The part of a pino logger the indexer uses. */
export interface IndexerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}
