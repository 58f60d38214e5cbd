// Which GPUs still count samples older than a given time in the last-hour totals, found without
// visiting every GPU: the time of each one's oldest counted sample, in one dense array that a ranking
// scans in microseconds (10,000 doubles), touching only the GPUs with something to let go.
export class OldestCounted<T> {
  #times = new Float64Array(64).fill(Infinity);
  readonly #items: (T | undefined)[] = [];
  readonly #free: number[] = [];

  /** A place for `item`, with nothing counted yet; returns its index. */
  add(item: T): number {
    const index = this.#free.pop() ?? this.#items.length;
    if (index >= this.#times.length) {
      const grown = new Float64Array(this.#times.length * 2).fill(Infinity);
      grown.set(this.#times);
      this.#times = grown;
    }
    this.#items[index] = item;
    this.#times[index] = Infinity;
    return index;
  }

  remove(index: number): void {
    this.#items[index] = undefined;
    this.#times[index] = Infinity;
    this.#free.push(index);
  }

  /** The time (s) of the item's oldest counted sample; Infinity when it counts none. */
  set(index: number, time: number): void {
    this.#times[index] = time;
  }

  /** Calls `visit` for every item whose oldest counted sample is older than `before`. */
  forEachOlder(before: number, visit: (item: T, index: number) => void): void {
    const times = this.#times;
    const count = this.#items.length;
    for (let index = 0; index < count; index += 1) {
      if ((times[index] as number) >= before) continue;
      const item = this.#items[index];
      if (item !== undefined) visit(item, index);
    }
  }
}
