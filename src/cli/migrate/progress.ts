// Progress lines of a long copy: rows so far, of how many, and the rate, at most one line per
// interval while a phase runs and one when it ends. Time is passed in.

export interface ProgressOptions {
  clock: { now(): number };
  print: (line: string) => void;
  /** Least time between two lines of one phase, ms. */
  intervalMs?: number;
}

const format = (n: number) => Math.round(n).toLocaleString('en-US');

export class Progress {
  readonly #options: ProgressOptions;
  #phase = '';
  #total: number | null = null;
  #rows = 0;
  /** Rows an earlier run copied in this phase. */
  #earlier = 0;
  #started = 0;
  #printed = 0;

  constructor(options: ProgressOptions) {
    this.#options = options;
  }

  /** Starts a phase; `done` rows were copied by an earlier run. */
  start(phase: string, total: number | null, done = 0): void {
    this.#phase = phase;
    this.#total = total;
    this.#rows = 0;
    this.#earlier = done;
    this.#started = this.#options.clock.now();
    this.#printed = this.#started;
    if (done > 0) this.#options.print(`${phase}: resuming after ${format(done)} rows copied by an earlier run`);
  }

  advance(rows: number): void {
    this.#rows += rows;
    const now = this.#options.clock.now();
    if (now - this.#printed < (this.#options.intervalMs ?? 2_000)) return;
    this.#printed = now;
    const of = this.#total === null ? '' : ` of ${format(this.#total)}`;
    this.#options.print(`${this.#phase}: ${format(this.#earlier + this.#rows)}${of} rows, ${format(this.#rate(now))} rows/s`);
  }

  /** Ends the phase with its count and rate; `note` is added in parentheses. */
  finish(note?: string): { rows: number; seconds: number } {
    const now = this.#options.clock.now();
    const seconds = (now - this.#started) / 1000;
    const extra = note === undefined ? '' : ` (${note})`;
    this.#options.print(`${this.#phase}: ${format(this.#rows)} rows in ${seconds.toFixed(1)} s, ${format(this.#rate(now))} rows/s${extra}`);
    return { rows: this.#rows, seconds };
  }

  note(line: string): void {
    this.#options.print(line);
  }

  /** Seconds since the phase started. */
  seconds(): number {
    return (this.#options.clock.now() - this.#started) / 1000;
  }

  #rate(now: number): number {
    const seconds = (now - this.#started) / 1000;
    return seconds > 0 ? this.#rows / seconds : 0;
  }
}
