// The writer's side of the telemetry that replicas share on PostgreSQL: each attributed sample adds to
// its workload's summary of the current bucket (telemetry_summary_seconds wide) in memory. Ended
// buckets are taken out, oldest first, as rows to store (summary-flusher.ts). Only the current bucket
// and those not yet stored are held: no rings.
//
// Each row also carries the workload's usage figures (usage-tally.ts). A sample's own figures go to its
// bucket. Idle time is judged per GPU minute, and a minute may straddle buckets of any width: its idle
// seconds go to the bucket holding its last millisecond. Minutes are closed before buckets are taken
// out, and that bucket ends at or after the minute, so it is always still here to take them.
import { emptyUsage, type GpuUsage } from '../../domain/gpu-usage.js';
import type { GpuBucketRow } from '../../domain/telemetry.js';
import { METRIC_COUNT } from '../rings/metric-codec.js';
import { roundAverage } from '../summaries/round-average.js';
import {
  addSampleUsage, checkUsageRules, IdleMinutes, type IdleMinute, type IdleMinuteListener, type SampleFacts,
} from './usage-tally.js';

class WorkloadBucket {
  readonly count = new Float64Array(METRIC_COUNT);
  readonly sum = new Float64Array(METRIC_COUNT);
  readonly min = new Float64Array(METRIC_COUNT).fill(Infinity);
  readonly max = new Float64Array(METRIC_COUNT).fill(-Infinity);
  /** Each GPU's newest sample in the bucket: its time and values. */
  readonly latest = new Map<string, { at: number; values: Float64Array }>();
  readonly usage: GpuUsage = emptyUsage();

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
    const row: GpuBucketRow = {
      workloadId,
      clusterId: this.clusterId,
      count: [],
      sum: [],
      min: [],
      max: [],
      latestSum: [],
      latestCount: [],
      current: [],
      usage: { ...this.usage },
    };
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

export interface BucketAccumulatorOptions {
  widthMs: number;
  /** Seconds one sample stands for in the usage figures: scrape_interval_seconds. */
  intervalSeconds: number;
  /** idle_threshold_percent. */
  idleThresholdPercent: number;
  onIdleMinute?: IdleMinuteListener;
}

/** One GPU's sample at `at` (ms) for a workload of `clusterId`, in reported units (NaN: missing). */
export interface BucketSample extends SampleFacts {
  workloadId: string;
  clusterId: string;
  gpuKey: string;
  at: number;
  values: Float64Array;
}

export class BucketAccumulator {
  readonly widthMs: number;
  readonly #intervalSeconds: number;
  readonly #buckets = new Map<number, Map<string, WorkloadBucket>>();
  /** Each GPU's open minute, tagged with its workload's cluster. */
  readonly #minutes: IdleMinutes<string>;
  readonly #listener: IdleMinuteListener | undefined;
  readonly #onIdle = (minute: IdleMinute<string>): void => {
    const bucketAt = Math.floor((minute.end - 1) / this.widthMs) * this.widthMs;
    this.#bucket(bucketAt, minute.workloadId, minute.tag).usage.idleSeconds += minute.idleSeconds;
    this.#listener?.({ workloadId: minute.workloadId, end: minute.end, idleSeconds: minute.idleSeconds });
  };
  /** Buckets starting before this were taken out: a sample for one of them comes too late. */
  #takenBefore = -Infinity;
  #lateSamples = 0;

  constructor(options: BucketAccumulatorOptions) {
    if (!(Number.isInteger(options.widthMs) && options.widthMs > 0)) {
      throw new Error(`Cannot summarize GPU samples: the bucket width must be a positive whole number of ms, got ${options.widthMs}`);
    }
    this.widthMs = options.widthMs;
    this.#intervalSeconds = checkUsageRules(options).intervalSeconds;
    this.#listener = options.onIdleMinute;
    this.#minutes = new IdleMinutes(options);
  }

  add(sample: BucketSample): void {
    const bucketAt = Math.floor(sample.at / this.widthMs) * this.widthMs;
    if (bucketAt < this.#takenBefore) {
      this.#lateSamples += 1;
      return;
    }
    const bucket = this.#bucket(bucketAt, sample.workloadId, sample.clusterId);
    bucket.add(sample.gpuKey, sample.at, sample.values);
    addSampleUsage(bucket.usage, sample.values, sample, this.#intervalSeconds);
    this.#minutes.add(
      { workloadId: sample.workloadId, gpuKey: sample.gpuKey, at: sample.at, values: sample.values, tag: sample.clusterId },
      this.#onIdle,
    );
  }

  /** Takes out the buckets that ended at or before `until` (ms), oldest first, with the GPU minutes ended by then. */
  takeEnded(until: number): EndedBucket[] {
    this.#minutes.closeEnded(until, this.#onIdle);
    return this.#take((bucketAt) => bucketAt + this.widthMs <= until);
  }

  /** Takes out every bucket, the current one and every open GPU minute included (at shutdown). */
  takeAll(): EndedBucket[] {
    this.#minutes.closeAll(this.#onIdle);
    return this.#take(() => true);
  }

  /** Samples dropped because their bucket had already been taken out. */
  get lateSamples(): number {
    return this.#lateSamples;
  }

  get openBuckets(): number {
    return this.#buckets.size;
  }

  #bucket(bucketAt: number, workloadId: string, clusterId: string): WorkloadBucket {
    let workloads = this.#buckets.get(bucketAt);
    if (workloads === undefined) this.#buckets.set(bucketAt, (workloads = new Map()));
    let bucket = workloads.get(workloadId);
    if (bucket === undefined) workloads.set(workloadId, (bucket = new WorkloadBucket(clusterId)));
    return bucket;
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
