// How long a counter has stood still, measured on the liveness clock whenever a probe looks. The
// parts that do the work only count (ticks started, writes done); knowing time, and what "too long"
// is, stays with the liveness checks. A value is timed from the first look that saw it, so a stall
// is noticed at most one probe period late, never early.
export class ProgressWatch {
  readonly #now: () => number;
  readonly #seen = new Map<string, { value: number; since: number }>();

  constructor(now: () => number) {
    this.#now = now;
  }

  /** How long (ms) the counter `key` has been at `value`; 0 when it just moved. */
  stillFor(key: string, value: number): number {
    const now = this.#now();
    const seen = this.#seen.get(key);
    if (seen === undefined || seen.value !== value) {
      this.#seen.set(key, { value, since: now });
      return 0;
    }
    return now - seen.since;
  }

  /** Forgets the counters not in `keys` (a cluster no longer watched). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.#seen.keys()) if (!keys.has(key)) this.#seen.delete(key);
  }
}
