// A map whose entries expire after a fixed time and which holds at most `maxEntries`, the oldest
// going first: what is kept per token stays bounded however many different tokens arrive.

export class ExpiringMap<V> {
  /** In insertion order (a Map's): the first entry is the oldest. */
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly options: { ttlMs: number; maxEntries: number; now: () => number },
  ) {}

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.options.now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value` for ttlMs from now (nothing with ttlMs 0). */
  set(key: string, value: V): void {
    if (this.options.ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.options.now() + this.options.ttlMs });
    while (this.#entries.size > this.options.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
