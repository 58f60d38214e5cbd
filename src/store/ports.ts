// The index's write port, once: what a cluster's writer session, a seed writer and the retention job
// write through. Every layer that carries these writes elsewhere (the write worker's thread, a lease
// session) derives its methods from here rather than declaring them again.
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
}

/** Retention's write: one bounded batch per call, so that the job can yield between batches. */
export interface FinishedWorkloadPurger {
  /** Deletes up to `limit` workloads finished before `cutoffMs`; fewer than `limit` means none is left. */
  deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number>;
}

/** Writes without a cluster's lock: tests and benchmarks seed an index with them. */
export interface SeedWriter extends IndexWriter, FinishedWorkloadPurger {}

/** The methods of IndexWriter, by name, for what forwards them (derived, never listed again). */
export const INDEX_WRITER_METHODS = ['upsertWorkloads', 'upsertPodIntervals', 'writeWorkloads', 'closeOpenIntervals'] as const satisfies readonly (keyof IndexWriter)[];
export type IndexWriterMethod = (typeof INDEX_WRITER_METHODS)[number];

// A method added to the port and not listed above fails the type check here.
const everyMethodListed: Exclude<keyof IndexWriter, IndexWriterMethod> extends never ? true : never = true;
void everyMethodListed;

/** The writes of `writer`, bound to it: what a session that writes through it hands on. */
export function boundWriter(writer: IndexWriter): IndexWriter {
  const bound: Partial<Record<IndexWriterMethod, unknown>> = {};
  for (const method of INDEX_WRITER_METHODS) bound[method] = writer[method].bind(writer);
  return bound as IndexWriter;
}
