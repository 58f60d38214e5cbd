// The micro-batch of the indexer: rows, intervals and interval closings queued by events,
// deduplicated by key (the last one queued wins), written together by the next flush. What it is
// given of intervals is also told, as it comes, to the indexer's observer (the fleet's allocations).
import type { PodGpuInterval, WorkloadRecord } from '../../domain/workload.js';

/** What the batch tells of the intervals it is given: each with its pod's node, and the closings. */
export interface BatchObserver {
  interval(interval: PodGpuInterval): void;
  closed(workloadIds: readonly string[]): void;
}

/** Workloads whose still open pod intervals end at `at` (see WorkloadSink.closeOpenIntervals). */
export interface IntervalClosing {
  workloadIds: string[];
  at: number;
}

export interface BatchContents {
  rows: WorkloadRecord[];
  intervals: PodGpuInterval[];
  closings: IntervalClosing[];
}

export class WriteBatch {
  readonly #observer: BatchObserver | undefined;
  #rows = new Map<string, WorkloadRecord>();
  #intervals = new Map<string, PodGpuInterval>();
  /** When each workload's open intervals end, by workload id. */
  #closings = new Map<string, number>();

  constructor(observer?: BatchObserver) {
    this.#observer = observer;
  }

  addRow(row: WorkloadRecord): void {
    this.#rows.set(row.workloadId, row);
  }

  /** Intervals without GPUs are never stored (the pods of a Job without GPUs). */
  addInterval(interval: PodGpuInterval): void {
    if (interval.gpus <= 0 || interval.podUid === '') return;
    this.#intervals.set(interval.podUid, interval);
    this.#observer?.interval(interval);
  }

  closeOpenIntervals(workloadIds: readonly string[], at: number): void {
    for (const workloadId of workloadIds) this.#closings.set(workloadId, at);
    this.#observer?.closed(workloadIds);
  }

  get size(): number {
    return this.#rows.size + this.#intervals.size + this.#closings.size;
  }

  /** The rows queued, newest version of each. */
  rows(): IterableIterator<WorkloadRecord> {
    return this.#rows.values();
  }

  /** Empties the batch and returns what it held, the closings grouped by time. */
  take(): BatchContents {
    const closings = new Map<number, string[]>();
    for (const [workloadId, at] of this.#closings) {
      const ids = closings.get(at);
      if (ids === undefined) closings.set(at, [workloadId]);
      else ids.push(workloadId);
    }
    const contents = {
      rows: [...this.#rows.values()],
      intervals: [...this.#intervals.values()],
      closings: [...closings].map(([at, workloadIds]) => ({ workloadIds, at })),
    };
    this.#rows = new Map();
    this.#intervals = new Map();
    this.#closings = new Map();
    return contents;
  }
}
