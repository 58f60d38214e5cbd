// The buckets queue percentiles fall back on when a range holds more workloads than they read one by
// one (EXACT_QUEUE_WAITS, src/query/ports.ts): waits in whole seconds, a bucket per second below
// 256 s, then 128 buckets per doubling, so that a bucket spans less than 1/128 of any wait in it
// (WAIT_BUCKET_ERROR). Each bucket keeps its count and its smallest wait, and a percentile is the
// smallest wait of the bucket that holds its rank: the queue_seconds of one of the workloads, never
// above the exact percentile and less than 1/128 below it. A group holds at most a few thousand
// buckets whatever its workloads, so the memory of a read is bounded by its groups, not its rows.
//
// Both backends bucket alike: SQLite in the connection's aggregate WAIT_BUCKETS (JavaScript, in
// src/store/sqlite/sorted-waits.ts), PostgreSQL in SQL (waitBucketSql); the integer arithmetic is the same.
import { nearestRank, type Percentile } from '../../domain/percentiles.js';

/** Waits below this many seconds have a bucket each. */
const EXACT_BELOW_BITS = 8;
/** Bit length from which every bucket is as wide as this one's: no wait comes near 2^44 s (557,000 years). */
const MAX_BITS = 44;

/** The smallest wait (s) of the bucket that holds `seconds`: its bits below the 8 leading ones cleared. */
export function waitBucket(seconds: number): number {
  const shift = Math.min(bitLength(seconds), MAX_BITS) - EXACT_BELOW_BITS;
  if (shift <= 0) return seconds;
  const width = 2 ** shift;
  return Math.floor(seconds / width) * width;
}

/** waitBucket in SQL over an integer expression of whole seconds (evaluated once per branch taken). */
export function waitBucketSql(seconds: string): string {
  const branches: string[] = [];
  for (let bits = EXACT_BELOW_BITS + 1; bits < MAX_BITS; bits++) {
    const shift = bits - EXACT_BELOW_BITS;
    branches.push(`WHEN ${seconds} < ${2 ** bits} THEN (${seconds} >> ${shift}) << ${shift}`);
  }
  const last = MAX_BITS - EXACT_BELOW_BITS;
  const exact = `WHEN ${seconds} < ${2 ** EXACT_BELOW_BITS} THEN ${seconds}`;
  return `CASE ${exact} ${branches.join(' ')} ELSE (${seconds} >> ${last}) << ${last} END`;
}

function bitLength(n: number): number {
  if (n < 2 ** 32) return 32 - Math.clz32(n);
  let bits = 32;
  while (2 ** bits <= n) bits++;
  return bits;
}

/** One bucket of one group: its count and its smallest wait in whole seconds. */
export interface WaitBucketRow {
  key: string;
  bucket: number;
  n: number;
  low: number;
}

/** Each group's buckets, filled a wait at a time (SQLite's aggregate) or from rows (PostgreSQL's GROUP BY). */
export class WaitBuckets {
  readonly #groups = new Map<string, Map<number, { n: number; low: number }>>();

  add(key: string, seconds: number): void {
    this.merge({ key, bucket: waitBucket(seconds), n: 1, low: seconds });
  }

  merge(row: WaitBucketRow): void {
    let buckets = this.#groups.get(row.key);
    if (buckets === undefined) {
      buckets = new Map();
      this.#groups.set(row.key, buckets);
    }
    const held = buckets.get(row.bucket);
    if (held === undefined) buckets.set(row.bucket, { n: row.n, low: row.low });
    else {
      held.n += row.n;
      held.low = Math.min(held.low, row.low);
    }
  }

  get size(): number {
    return this.#groups.size;
  }

  rows(): WaitBucketRow[] {
    return [...this.#groups].flatMap(([key, buckets]) => [...buckets].map(([bucket, { n, low }]) => ({ key, bucket, n, low })));
  }

  keys(): string[] {
    return [...this.#groups.keys()];
  }

  /** The percentiles of group `key`'s waits (null for a group without any), in the order asked. */
  percentiles(key: string, percentiles: readonly Percentile[]): (number | null)[] {
    const buckets = [...(this.#groups.get(key) ?? new Map<number, { n: number; low: number }>())];
    buckets.sort(([a], [b]) => a - b);
    const total = buckets.reduce((sum, [, { n }]) => sum + n, 0);
    return percentiles.map((p) => {
      if (total === 0) return null;
      const rank = nearestRank(p, total);
      let seen = 0;
      for (const [, { n, low }] of buckets) {
        seen += n;
        if (seen >= rank) return low;
      }
      return null;
    });
  }
}
