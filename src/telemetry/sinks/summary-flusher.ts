// Stores the buckets the writer gathered (bucket-accumulator.ts) once they have ended and the scrapes
// of their last tick are in (`graceMs`), oldest first, then brings the last-hour figures of the
// clusters this replica writes up to the newest ended bucket, and drops buckets older than the
// longest window (24 h) plus one hour. A bucket the database refused stays queued for the next run,
// up to `maxQueued`; beyond that the oldest go, counted and logged.
import type { Clock } from '../../domain/clock.js';
import type { GpuSummaryStore } from '../../domain/telemetry.js';
import type { BucketAccumulator, EndedBucket } from './bucket-accumulator.js';

const KEPT_MS = 25 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;

export interface SummaryFlusherOptions {
  graceMs: number;
  clock: Clock;
  /** The clusters this replica writes now. */
  clusters: () => Iterable<string>;
  maxQueued?: number;
  logger: { warn(obj: object, msg?: string): void };
}

export class SummaryFlusher {
  readonly #store: GpuSummaryStore;
  readonly #buckets: BucketAccumulator;
  readonly #options: SummaryFlusherOptions;
  readonly #queued: EndedBucket[] = [];
  /** End of the newest bucket the last-hour figures were refreshed to, per cluster. */
  readonly #refreshedTo = new Map<string, number>();
  #prunedAt = -Infinity;
  #dropped = 0;

  constructor(store: GpuSummaryStore, buckets: BucketAccumulator, options: SummaryFlusherOptions) {
    this.#store = store;
    this.#buckets = buckets;
    this.#options = options;
  }

  /** Stores what has ended (`all`: everything, at shutdown). Returns the rows stored. */
  async flush(options: { all?: boolean } = {}): Promise<number> {
    const now = this.#options.clock.now();
    const ready = now - this.#options.graceMs;
    this.#queued.push(...(options.all === true ? this.#buckets.takeAll() : this.#buckets.takeEnded(ready)));
    this.#dropOverflow();
    let stored = 0;
    const touched = new Set<string>();
    while (this.#queued.length > 0) {
      const bucket = this.#queued[0] as EndedBucket;
      stored += await this.#store.writeBucket(bucket.bucketAt, bucket.rows);
      this.#queued.shift();
      for (const row of bucket.rows) touched.add(row.clusterId);
    }
    const width = this.#buckets.widthMs;
    const to = Math.floor(ready / width) * width;
    for (const clusterId of new Set([...this.#options.clusters(), ...touched])) {
      if ((this.#refreshedTo.get(clusterId) ?? -Infinity) >= to && !touched.has(clusterId)) continue;
      await this.#store.refreshLastHour(clusterId, to);
      this.#refreshedTo.set(clusterId, to);
    }
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      for (const clusterId of this.#options.clusters()) await this.#store.pruneBuckets(clusterId, now - KEPT_MS);
      this.#prunedAt = now;
    }
    return stored;
  }

  /** Buckets gathering and waiting for the database, rows dropped because too many waited, late samples. */
  stats(): { openBuckets: number; queuedBuckets: number; droppedRows: number; lateSamples: number } {
    return {
      openBuckets: this.#buckets.openBuckets,
      queuedBuckets: this.#queued.length,
      droppedRows: this.#dropped,
      lateSamples: this.#buckets.lateSamples,
    };
  }

  #dropOverflow(): void {
    const overflow = this.#queued.length - (this.#options.maxQueued ?? 60);
    if (overflow <= 0) return;
    const gone = this.#queued.splice(0, overflow);
    const rows = gone.reduce((n, bucket) => n + bucket.rows.length, 0);
    this.#dropped += rows;
    this.#options.logger.warn(
      { buckets: gone.length, rows, oldest: new Date(gone[0]?.bucketAt ?? 0).toISOString() },
      'GPU telemetry buckets dropped: the database has refused them for too long',
    );
  }
}
