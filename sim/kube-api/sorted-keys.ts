// The keys of one resource in etcd order (namespace/name, byte order for the ASCII names Kubernetes
// allows), kept so that a LIST chunk starts with a binary search instead of a sort. Inserts and removes
// are buffered and merged in O(n + k log k) the next time a reader asks, so a stream of creates and
// deletes costs nothing until a LIST comes, and a LIST served while they happen pays one merge per page
// (not one sort of every key, as re-sorting after each change would).

export class SortedKeys {
  private sorted: string[] = [];
  /** Keys present but not yet merged into `sorted` (never in `sorted`). */
  private readonly added = new Set<string>();
  /** Keys of `sorted` that are gone (always in `sorted`). */
  private readonly removed = new Set<string>();

  get size(): number {
    return this.sorted.length - this.removed.size + this.added.size;
  }

  /** Adds a key that is absent. */
  insert(key: string): void {
    if (this.removed.has(key)) this.removed.delete(key);
    else this.added.add(key);
  }

  /** Removes a key that is present. */
  remove(key: string): void {
    if (this.added.has(key)) this.added.delete(key);
    else this.removed.add(key);
  }

  /** Every key, sorted; the array is the store's own and must not be modified. */
  view(): readonly string[] {
    if (this.added.size > 0 || this.removed.size > 0) this.merge();
    return this.sorted;
  }

  /** Index of the first key strictly greater than `key` (0 when `key` is undefined). */
  after(key: string | undefined): number {
    const keys = this.view();
    return key === undefined ? 0 : lowerBound(keys, (k) => k > key);
  }

  /** Index of the first key that is not below `key`. */
  atOrAfter(key: string): number {
    return lowerBound(this.view(), (k) => k >= key);
  }

  private merge(): void {
    const incoming = [...this.added].sort();
    const kept = this.removed.size === 0 ? this.sorted : this.sorted.filter((k) => !this.removed.has(k));
    const merged: string[] = new Array<string>(kept.length + incoming.length);
    let i = 0;
    let j = 0;
    let out = 0;
    while (i < kept.length && j < incoming.length) {
      const a = kept[i] as string;
      const b = incoming[j] as string;
      if (a < b) {
        merged[out++] = a;
        i += 1;
      } else {
        merged[out++] = b;
        j += 1;
      }
    }
    while (i < kept.length) merged[out++] = kept[i++] as string;
    while (j < incoming.length) merged[out++] = incoming[j++] as string;
    this.sorted = merged;
    this.added.clear();
    this.removed.clear();
  }
}

/** First index whose key satisfies the (monotone) predicate. */
function lowerBound(keys: readonly string[], predicate: (key: string) => boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (predicate(keys[mid] ?? '')) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
