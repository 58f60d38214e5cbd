// One batch taken from the WriteBatch and written to the sink in bounded steps. SQLite runs on the
// event loop's thread: the first flush after the LIST of a large cluster (86k rows and 100k pod
// intervals) took 11 s in one transaction, during which /livez, /readyz and the API did not answer.
// Written in steps of a few hundred items with the loop free in between, the same work leaves every
// request a turn. Order is kept across steps: every row, then every interval (the store skips the
// interval of a row it does not have yet), then the closings of open intervals.
import type { WorkloadRecord } from '../domain/workload.js';
import type { BatchContents } from './write-batch.js';
import type { WorkloadSink } from './workload-sink.js';

export interface WriteTotals {
  rows: number;
  intervals: number;
  closed: number;
}

export class StagedWrite {
  readonly contents: BatchContents;
  /** What the sink reported changed so far. */
  readonly written: WriteTotals = { rows: 0, intervals: 0, closed: 0 };
  #rowsAt = 0;
  #intervalsAt = 0;
  #closingsAt = 0;

  constructor(contents: BatchContents) {
    this.contents = contents;
  }

  get done(): boolean {
    const { rows, intervals, closings } = this.contents;
    return this.#rowsAt >= rows.length && this.#intervalsAt >= intervals.length && this.#closingsAt >= closings.length;
  }

  /** Rows, intervals and closings not written yet. */
  get remaining(): number {
    const { rows, intervals, closings } = this.contents;
    return rows.length - this.#rowsAt + (intervals.length - this.#intervalsAt) + (closings.length - this.#closingsAt);
  }

  /** The rows this write has not reached yet: the store does not know them. */
  unwrittenRows(): readonly WorkloadRecord[] {
    return this.contents.rows.slice(this.#rowsAt);
  }

  /**
   * Writes up to `budget` items, each part in its own transaction. A sink that throws leaves the
   * position where it was, so the next step writes the same items again (every write is idempotent).
   * The position moves only once the sink has answered; the caller never runs two steps at once.
   */
  async step(sink: WorkloadSink, budget: number): Promise<void> {
    const { rows, intervals, closings } = this.contents;
    let left = budget;
    if (this.#rowsAt < rows.length && left > 0) {
      const chunk = rows.slice(this.#rowsAt, this.#rowsAt + left);
      const written = await sink.upsertWorkloads(chunk);
      this.written.rows += written;
      this.#rowsAt += chunk.length;
      left -= chunk.length;
    }
    if (this.#rowsAt < rows.length) return;
    if (this.#intervalsAt < intervals.length && left > 0) {
      const chunk = intervals.slice(this.#intervalsAt, this.#intervalsAt + left);
      const written = await sink.upsertPodIntervals(chunk);
      this.written.intervals += written;
      this.#intervalsAt += chunk.length;
      left -= chunk.length;
    }
    if (this.#intervalsAt < intervals.length) return;
    // A closing is one statement however many workloads it names (a relist may cancel thousands).
    while (this.#closingsAt < closings.length && left > 0) {
      const { workloadIds, at } = closings[this.#closingsAt] as BatchContents['closings'][number];
      const closed = await sink.closeOpenIntervals(workloadIds, at);
      this.written.closed += closed;
      this.#closingsAt += 1;
      left -= 1;
    }
  }
}
