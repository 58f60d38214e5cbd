// The writer's buckets of shared telemetry: what each workload's row holds, when a bucket counts as
// ended, and what happens to a sample that comes after its bucket was taken out.
import { expect } from 'chai';
import { BucketAccumulator, type BucketSample } from '../../../src/telemetry/sinks/bucket-accumulator.js';
import { usageOf } from '../../support/gpu-usage.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);
/** gpu_utilization, memory_utilization, temperature, power_usage, gpu_usage */
const values = (...v: number[]) => Float64Array.from(v);
const USAGE_RULES = { intervalSeconds: 15, idleThresholdPercent: 5 };
const accumulator = (widthMs: number) => new BucketAccumulator({ widthMs, ...USAGE_RULES });
/** A plain sample of the job's GPU-a (no MIG, no new XID) unless told otherwise. */
const sample = (at: number, v: Float64Array, more: Partial<BucketSample> = {}): BucketSample => ({
  workloadId: 'job', clusterId: 'west', gpuKey: 'GPU-a', at, values: v, mig: false, xidError: false, ...more,
});
/** Utilization only. */
const util = (percent: number) => values(percent, NaN, NaN, NaN, NaN);
/** Each taken bucket's start (s after T0) and the idle seconds of its job row. */
const idleByBucket = (taken: ReturnType<BucketAccumulator['takeAll']>) =>
  taken.map((b) => [(b.bucketAt - T0) / 1000, b.rows.find((r) => r.workloadId === 'job')?.usage.idleSeconds]);

describe('telemetry: buckets of shared telemetry (writer side)', () => {
  it('sums each workload\'s samples per metric, with each GPU\'s newest sample as the current value', () => {
    const buckets = accumulator(MINUTE);
    buckets.add(sample(T0 + 5_000, values(40, 10, 60, 300, NaN)));
    buckets.add(sample(T0 + 5_000, values(60, 20, 70, 400, NaN), { gpuKey: 'GPU-b' }));
    buckets.add(sample(T0 + 20_000, values(50, 30, 65, 350, NaN)));
    const [bucket] = buckets.takeEnded(T0 + MINUTE);
    expect(bucket?.bucketAt).to.equal(T0);
    expect(bucket?.rows).to.deep.equal([
      {
        workloadId: 'job', clusterId: 'west',
        count: [3, 3, 3, 3, 0], sum: [150, 60, 195, 1050, 0], min: [40, 10, 60, 300, null], max: [60, 30, 70, 400, null],
        latestSum: [110, 50, 135, 750, 0], latestCount: [2, 2, 2, 2, 0], current: [55, 25, 67.5, 375, null],
        // 3 samples × 15 s; (4000 + 6000 + 5000) × 15 and (3000 + 4000 + 3500) × 15. No minute idle.
        usage: usageOf({ utilSeconds: 45, utilWeighted: 225_000, powerSeconds: 45, energyDj: 157_500 }),
      },
    ]);
  });

  it('gives out a bucket only once it has ended, oldest first, and counts a sample that comes too late', () => {
    const buckets = accumulator(MINUTE);
    for (const at of [T0 + 1_000, T0 + MINUTE + 1_000, T0 + 2 * MINUTE + 1_000]) buckets.add(sample(at, values(1, 1, 1, 1, 1)));
    expect(buckets.takeEnded(T0 + MINUTE - 1)).to.deep.equal([]);
    expect(buckets.takeEnded(T0 + 2 * MINUTE).map((b) => b.bucketAt)).to.deep.equal([T0, T0 + MINUTE]);
    buckets.add(sample(T0 + MINUTE + 59_000, values(9, 9, 9, 9, 9)));
    expect(buckets.lateSamples).to.equal(1);
    expect(buckets.takeAll().map((b) => [b.bucketAt, b.rows[0]?.count[0]])).to.deep.equal([[T0 + 2 * MINUTE, 1]]);
    expect(buckets.openBuckets).to.equal(0);
  });

  it('keeps workloads of different clusters apart in one bucket', () => {
    const buckets = accumulator(1_000);
    buckets.add(sample(T0, values(1, 1, 1, 1, 1), { workloadId: 'a' }));
    buckets.add(sample(T0 + 999, values(2, 2, 2, 2, 2), { workloadId: 'b', clusterId: 'east', gpuKey: 'GPU-b' }));
    expect(buckets.takeAll()[0]?.rows.map((r) => [r.workloadId, r.clusterId, r.sum[0]])).to.deep.equal([['a', 'west', 1], ['b', 'east', 2]]);
  });

  it('refuses a bucket width that is not a positive whole number of milliseconds', () => {
    expect(() => accumulator(0)).to.throw('Cannot summarize GPU samples: the bucket width must be a positive whole number of ms, got 0');
  });

  describe('usage figures', () => {
    it('puts an idle minute in the bucket holding its last millisecond, for widths of 30, 45, 60 and 120 s', () => {
      // GPU-a idle in [T0, T0 + 60 s) and [T0 + 60 s, T0 + 120 s): 4 samples of 15 s each.
      const minutes = (buckets: BucketAccumulator) => {
        for (let i = 0; i < 8; i += 1) buckets.add(sample(T0 + i * 15_000, util(2)));
        return buckets;
      };
      expect(idleByBucket(minutes(accumulator(30_000)).takeEnded(T0 + 2 * MINUTE))).to.deep.equal([[0, 0], [30, 60], [60, 0], [90, 60]]);
      // A width that is no multiple of a minute: 59.999 s falls in [45, 90), 119.999 s in [90, 135).
      expect(idleByBucket(minutes(accumulator(45_000)).takeAll())).to.deep.equal([[0, 0], [45, 60], [90, 60]]);
      expect(idleByBucket(minutes(accumulator(MINUTE)).takeEnded(T0 + 2 * MINUTE))).to.deep.equal([[0, 60], [60, 60]]);
      // Both minutes in one bucket; the first is judged at T0 + 60 s, the bucket taken at its end.
      const wide = minutes(accumulator(120_000));
      expect(wide.takeEnded(T0 + MINUTE)).to.deep.equal([]);
      expect(idleByBucket(wide.takeEnded(T0 + 2 * MINUTE))).to.deep.equal([[0, 120]]);
    });

    it('makes a row of usage alone where an idle minute ends in a bucket without samples of the workload', () => {
      const buckets = accumulator(30_000);
      buckets.add(sample(T0, util(1)));
      buckets.add(sample(T0 + 15_000, util(3)));
      const taken = buckets.takeEnded(T0 + MINUTE);
      expect(taken.map((b) => b.bucketAt - T0)).to.deep.equal([0, 30_000]);
      expect(taken[1]?.rows).to.deep.equal([{
        workloadId: 'job', clusterId: 'west',
        count: [0, 0, 0, 0, 0], sum: [0, 0, 0, 0, 0], min: [null, null, null, null, null], max: [null, null, null, null, null],
        latestSum: [0, 0, 0, 0, 0], latestCount: [0, 0, 0, 0, 0], current: [null, null, null, null, null],
        usage: usageOf({ idleSeconds: 30 }),
      }]);
    });

    it('tells the listener of each idle minute it counts (the fleet\'s history counts it by node)', () => {
      const told: unknown[] = [];
      const buckets = new BucketAccumulator({ widthMs: 30_000, ...USAGE_RULES, onIdleMinute: (minute) => told.push(minute) });
      buckets.add(sample(T0, util(1)));
      buckets.add(sample(T0 + 15_000, util(3)));
      buckets.takeEnded(T0 + MINUTE);
      expect(told).to.deep.equal([{ workloadId: 'job', end: T0 + MINUTE, idleSeconds: 30 }]);
    });

    it('closes a minute when the GPU\'s next sample for the workload falls in a later minute', () => {
      const buckets = accumulator(MINUTE);
      buckets.add(sample(T0 + 10_000, util(1)));
      buckets.add(sample(T0 + 10_000, util(1), { workloadId: 'other' }));
      buckets.add(sample(T0 + 70_000, util(90)));
      // Out of order: the job's minute was judged at T0 + 70 s already, the other workload's is open.
      buckets.add(sample(T0 + 50_000, util(90)));
      buckets.add(sample(T0 + 50_000, util(1), { workloadId: 'other' }));
      const [first] = buckets.takeEnded(T0 + 2 * MINUTE);
      expect(first?.rows.map((r) => [r.workloadId, r.usage.idleSeconds])).to.deep.equal([['job', 15], ['other', 30]]);
    });

    it('keeps a sample that comes after its minute was judged out of it, and counts its own figures', () => {
      const buckets = accumulator(120_000);
      buckets.add(sample(T0 + 10_000, util(1)));
      expect(buckets.takeEnded(T0 + MINUTE)).to.deep.equal([]);
      buckets.add(sample(T0 + 50_000, util(1)));
      const [bucket] = buckets.takeEnded(T0 + 2 * MINUTE);
      expect(bucket?.rows[0]?.usage).to.deep.equal(usageOf({ utilSeconds: 30, utilWeighted: 100 * 30, idleSeconds: 15 }));
    });

    it('judges every open minute at takeAll (shutdown), into a bucket it then takes too', () => {
      const buckets = accumulator(30_000);
      buckets.add(sample(T0 + 10_000, util(1)));
      expect(idleByBucket(buckets.takeAll())).to.deep.equal([[0, 0], [30, 15]]);
      expect(buckets.openBuckets).to.equal(0);
      // After it, the rest of that minute comes too late for its bucket.
      buckets.add(sample(T0 + 40_000, util(1)));
      expect(buckets.lateSamples).to.equal(1);
    });

    it('counts no power for a MIG slice, and a new XID error of its GPU', () => {
      const buckets = accumulator(MINUTE);
      buckets.add(sample(T0, values(80, NaN, NaN, 300, NaN), { gpuKey: 'GPU-a/13', mig: true, xidError: true }));
      buckets.add(sample(T0, values(NaN, NaN, NaN, 250.5, NaN), { gpuKey: 'GPU-b' }));
      expect(buckets.takeAll()[0]?.rows[0]?.usage).to.deep.equal(usageOf({ utilSeconds: 15, utilWeighted: 8000 * 15, powerSeconds: 15, energyDj: 2505 * 15, gpuErrors: 1 }));
    });
  });
});
