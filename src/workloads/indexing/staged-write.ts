// One batch taken from the WriteBatch and written to the sink in bounded steps. SQLite runs on the
// event loop's thread: the first flush after the LIST of a large cluster (86k rows and 100k pod
// intervals) took 11 s in one transaction, during which /livez, /readyz and the API did not answer.
// Written in steps of a few hundred items with the loop free in between, the same work leaves every
// request a turn. Order is kept across steps: every row, then every interval (the store skips the
// interval of a row it does not have yet), then the closings of open intervals. A sink that writes
// rows and intervals together (WorkloadSink.writeWorkloads) gets each row with its workload's
// intervals in the same step, so that the row is written once.
import type { PodGpuInterval, WorkloadRecord } from '../../domain/workload.js';
import type { BatchContents } from './write-batch.js';
import type { WorkloadSink } from '../workload-sink.js';

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

  /** [k]: how many intervals belong to the first k rows (the intervals sorted by their row, orphans last). */
  readonly #intervalsOfFirstRows: number[];

  constructor(contents: BatchContents) {
    const { intervals, ofFirstRows } = byRow(contents);
    this.contents = { ...contents, intervals };
    this.#intervalsOfFirstRows = ofFirstRows;
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
    if (sink.writeWorkloads !== undefined) {
      left = await this.#rowsWithIntervals(sink.writeWorkloads.bind(sink), left);
    } else {
      left = await this.#rowsThenIntervals(sink, left);
    }
    if (this.#rowsAt < rows.length || this.#intervalsAt < intervals.length) return;
    // A closing is one statement however many workloads it names (a relist may cancel thousands).
    while (this.#closingsAt < closings.length && left > 0) {
      const { workloadIds, at } = closings[this.#closingsAt] as BatchContents['closings'][number];
      const closed = await sink.closeOpenIntervals(workloadIds, at);
      this.written.closed += closed;
      this.#closingsAt += 1;
      left -= 1;
    }
  }

  /** Up to `budget` rows, then (once every row is written) intervals, each part in its own call. Returns the budget left. */
  async #rowsThenIntervals(sink: WorkloadSink, budget: number): Promise<number> {
    const { rows, intervals } = this.contents;
    let left = budget;
    if (this.#rowsAt < rows.length && left > 0) {
      const chunk = rows.slice(this.#rowsAt, this.#rowsAt + left);
      const written = await sink.upsertWorkloads(chunk);
      this.written.rows += written;
      this.#rowsAt += chunk.length;
      left -= chunk.length;
    }
    if (this.#rowsAt < rows.length) return left;
    if (this.#intervalsAt < intervals.length && left > 0) {
      const chunk = intervals.slice(this.#intervalsAt, this.#intervalsAt + left);
      const written = await sink.upsertPodIntervals(chunk);
      this.written.intervals += written;
      this.#intervalsAt += chunk.length;
      left -= chunk.length;
    }
    return left;
  }

  /**
   * Up to `budget` items in one call: rows each with its intervals, then the intervals of workloads
   * without a row. Returns the budget left.
   */
  async #rowsWithIntervals(write: NonNullable<WorkloadSink['writeWorkloads']>, budget: number): Promise<number> {
    const { rows, intervals } = this.contents;
    let [row, interval, left] = [this.#rowsAt, this.#intervalsAt, budget];
    const ofFirstRows = this.#intervalsOfFirstRows;
    while (left > 0) {
      const ofTakenRows = row < rows.length ? (ofFirstRows[row] as number) : intervals.length;
      if (interval < ofTakenRows) interval += 1;
      // A row goes with all its intervals, or waits for the next step (unless it alone is more than a step).
      else if (row < rows.length && (left > (ofFirstRows[row + 1] as number) - (ofFirstRows[row] as number) || left === budget)) row += 1;
      else break;
      left -= 1;
    }
    if (row === this.#rowsAt && interval === this.#intervalsAt) return left;
    const written = await write(rows.slice(this.#rowsAt, row), intervals.slice(this.#intervalsAt, interval));
    this.written.rows += written.rows;
    this.written.intervals += written.intervals;
    this.#rowsAt = row;
    this.#intervalsAt = interval;
    return left;
  }
}

/** The intervals in the order of their workloads' rows, those of workloads without a row last. */
function byRow({ rows, intervals }: BatchContents): { intervals: PodGpuInterval[]; ofFirstRows: number[] } {
  const rowOf = new Map(rows.map((row, i) => [row.workloadId, i]));
  const buckets: PodGpuInterval[][] = Array.from({ length: rows.length + 1 }, () => []);
  for (const interval of intervals) (buckets[rowOf.get(interval.workloadId) ?? rows.length] as PodGpuInterval[]).push(interval);
  const ofFirstRows = [0];
  for (let k = 0; k < rows.length; k += 1) ofFirstRows.push((ofFirstRows[k] as number) + (buckets[k] as PodGpuInterval[]).length);
  return { intervals: buckets.flat(), ofFirstRows };
}
