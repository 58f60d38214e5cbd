// The writer's side of the telemetry that replicas share on PostgreSQL: each attributed sample adds to
// its workload's summary of the current bucket (telemetry_summary_seconds wide) in memory. Ended
// buckets are taken out, oldest first, as rows to store (summary-flusher.ts). Only the current bucket
// and those not yet stored are held: no rings.
import type { GpuBucketRow } from '../domain/telemetry.js';
import { METRIC_COUNT } from './metric-codec.js';
import { roundAverage } from './round-average.js';

class WorkloadBucket {
  readonly count = new Float64Array(METRIC_COUNT);
  readonly sum = new Float64Array(METRIC_COUNT);
  readonly min = new Float64Array(METRIC_COUNT).fill(Infinity);
  readonly max = new Float64Array(METRIC_COUNT).fill(-Infinity);
  /** Each GPU's newest sample in the bucket: its time and values. */
  readonly latest = new Map<string, { at: number; values: Float64Array }>();

  constructor(readonly clusterId: string) {}

  add(gpuKey: string, at: number, values: Float64Array): void {
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = values[m] ?? NaN;
      if (Number.isNaN(value)) continue;
      this.count[m] = (this.count[m] ?? 0) + 1;
      this.sum[m] = (this.sum[m] ?? 0) + value;
      if (value < (this.min[m] ?? Infinity)) this.min[m] = value;
      if (value > (this.max[m] ?? -Infinity)) this.max[m] = value;
    }
    const newest = this.latest.get(gpuKey);
    // The key is a slice of the scrape's text, which it would keep alive while the bucket lives.
    if (newest === undefined) this.latest.set(Buffer.from(gpuKey, 'utf8').toString('utf8'), { at, values: Float64Array.from(values) });
    else if (at >= newest.at) {
      newest.at = at;
      newest.values.set(values);
    }
  }

  row(workloadId: string): GpuBucketRow {
    const row: GpuBucketRow = { workloadId, clusterId: this.clusterId, count: [], sum: [], min: [], max: [], latestSum: [], latestCount: [], current: [] };
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const count = this.count[m] ?? 0;
      row.count.push(count);
      row.sum.push(this.sum[m] ?? 0);
      row.min.push(count === 0 ? null : (this.min[m] ?? null));
      row.max.push(count === 0 ? null : (this.max[m] ?? null));
      let latestSum = 0;
      let latestCount = 0;
      for (const { values } of this.latest.values()) {
        const value = values[m] ?? NaN;
        if (Number.isNaN(value)) continue;
        latestSum += value;
        latestCount += 1;
      }
      row.latestSum.push(latestSum);
      row.latestCount.push(latestCount);
      row.current.push(latestCount === 0 ? null : roundAverage(latestSum / latestCount));
    }
    return row;
  }
}

export interface EndedBucket {
  bucketAt: number;
  rows: GpuBucketRow[];
}

export class BucketAccumulator {
  readonly widthMs: number;
  readonly #buckets = new Map<number, Map<string, WorkloadBucket>>();
  /** Buckets starting before this were taken out: a sample for one of them comes too late. */
  #takenBefore = -Infinity;
  #lateSamples = 0;

  constructor(options: { widthMs: number }) {
    if (!(Number.isInteger(options.widthMs) && options.widthMs > 0)) throw new Error(`Cannot summarize GPU samples: the bucket width must be a positive whole number of ms, got ${options.widthMs}`);
    this.widthMs = options.widthMs;
  }

  /** One GPU's sample at `at` (ms) for a workload of `clusterId`, in reported units (NaN: missing). */
  add(sample: { workloadId: string; clusterId: string; gpuKey: string; at: number; values: Float64Array }): void {
    const bucketAt = Math.floor(sample.at / this.widthMs) * this.widthMs;
    if (bucketAt < this.#takenBefore) {
      this.#lateSamples += 1;
      return;
    }
    let workloads = this.#buckets.get(bucketAt);
    if (workloads === undefined) this.#buckets.set(bucketAt, (workloads = new Map()));
    let bucket = workloads.get(sample.workloadId);
    if (bucket === undefined) workloads.set(sample.workloadId, (bucket = new WorkloadBucket(sample.clusterId)));
    bucket.add(sample.gpuKey, sample.at, sample.values);
  }

  /** Takes out the buckets that ended at or before `until` (ms), oldest first. */
  takeEnded(until: number): EndedBucket[] {
    return this.#take((bucketAt) => bucketAt + this.widthMs <= until);
  }

  /** Takes out every bucket, the current one included (at shutdown). */
  takeAll(): EndedBucket[] {
    return this.#take(() => true);
  }

  /** Samples dropped because their bucket had already been taken out. */
  get lateSamples(): number {
    return this.#lateSamples;
  }

  get openBuckets(): number {
    return this.#buckets.size;
  }

  #take(ended: (bucketAt: number) => boolean): EndedBucket[] {
    const taken: EndedBucket[] = [];
    for (const [bucketAt, workloads] of this.#buckets) {
      if (!ended(bucketAt)) continue;
      this.#buckets.delete(bucketAt);
      taken.push({ bucketAt, rows: [...workloads].map(([workloadId, bucket]) => bucket.row(workloadId)) });
      this.#takenBefore = Math.max(this.#takenBefore, bucketAt + this.widthMs);
    }
    return taken.sort((a, b) => a.bucketAt - b.bucketAt);
  }
}
