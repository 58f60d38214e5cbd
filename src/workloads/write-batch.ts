// The micro-batch of the indexer: rows and intervals queued by events, deduplicated by key (the last
// one queued wins), written together by the next flush.
import type { PodGpuInterval, WorkloadRecord } from '../domain/workload.js';

export interface BatchContents {
  rows: WorkloadRecord[];
  intervals: PodGpuInterval[];
}

export class WriteBatch {
  #rows = new Map<string, WorkloadRecord>();
  #intervals = new Map<string, PodGpuInterval>();

  addRow(row: WorkloadRecord): void {
    this.#rows.set(row.workloadId, row);
  }

  /** Intervals without GPUs are never stored (the pods of a Job without GPUs). */
  addInterval(interval: PodGpuInterval): void {
    if (interval.gpus > 0 && interval.podUid !== '') this.#intervals.set(interval.podUid, interval);
  }

  get size(): number {
    return this.#rows.size + this.#intervals.size;
  }

  /** Empties the batch and returns what it held. */
  take(): BatchContents {
    const contents = { rows: [...this.#rows.values()], intervals: [...this.#intervals.values()] };
    this.#rows = new Map();
    this.#intervals = new Map();
    return contents;
  }

  /** Puts back what a failed write took, under anything queued since (newer entries win). */
  restore(contents: BatchContents): void {
    const rows = new Map(contents.rows.map((row) => [row.workloadId, row]));
    const intervals = new Map(contents.intervals.map((interval) => [interval.podUid, interval]));
    for (const [key, row] of this.#rows) rows.set(key, row);
    for (const [key, interval] of this.#intervals) intervals.set(key, interval);
    this.#rows = rows;
    this.#intervals = intervals;
  }
}
