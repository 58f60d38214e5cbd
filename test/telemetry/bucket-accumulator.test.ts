// The writer's buckets of shared telemetry: what each workload's row holds, when a bucket counts as
// ended, and what happens to a sample that comes after its bucket was taken out.
import { expect } from 'chai';
import { BucketAccumulator } from '../../src/telemetry/bucket-accumulator.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);
/** gpu_utilization, memory_utilization, temperature, power_usage, gpu_usage */
const values = (...v: number[]) => Float64Array.from(v);

describe('telemetry: buckets of shared telemetry (writer side)', () => {
  it('sums each workload\'s samples per metric, with each GPU\'s newest sample as the current value', () => {
    const buckets = new BucketAccumulator({ widthMs: MINUTE });
    buckets.add({ workloadId: 'job', clusterId: 'west', gpuKey: 'GPU-a', at: T0 + 5_000, values: values(40, 10, 60, 300, NaN) });
    buckets.add({ workloadId: 'job', clusterId: 'west', gpuKey: 'GPU-b', at: T0 + 5_000, values: values(60, 20, 70, 400, NaN) });
    buckets.add({ workloadId: 'job', clusterId: 'west', gpuKey: 'GPU-a', at: T0 + 20_000, values: values(50, 30, 65, 350, NaN) });
    const [bucket] = buckets.takeEnded(T0 + MINUTE);
    expect(bucket?.bucketAt).to.equal(T0);
    expect(bucket?.rows).to.deep.equal([
      {
        workloadId: 'job', clusterId: 'west',
        count: [3, 3, 3, 3, 0], sum: [150, 60, 195, 1050, 0], min: [40, 10, 60, 300, null], max: [60, 30, 70, 400, null],
        latestSum: [110, 50, 135, 750, 0], latestCount: [2, 2, 2, 2, 0], current: [55, 25, 67.5, 375, null],
      },
    ]);
  });

  it('gives out a bucket only once it has ended, oldest first, and counts a sample that comes too late', () => {
    const buckets = new BucketAccumulator({ widthMs: MINUTE });
    for (const at of [T0 + 1_000, T0 + MINUTE + 1_000, T0 + 2 * MINUTE + 1_000]) {
      buckets.add({ workloadId: 'job', clusterId: 'west', gpuKey: 'GPU-a', at, values: values(1, 1, 1, 1, 1) });
    }
    expect(buckets.takeEnded(T0 + MINUTE - 1)).to.deep.equal([]);
    expect(buckets.takeEnded(T0 + 2 * MINUTE).map((b) => b.bucketAt)).to.deep.equal([T0, T0 + MINUTE]);
    buckets.add({ workloadId: 'job', clusterId: 'west', gpuKey: 'GPU-a', at: T0 + MINUTE + 59_000, values: values(9, 9, 9, 9, 9) });
    expect(buckets.lateSamples).to.equal(1);
    expect(buckets.takeAll().map((b) => [b.bucketAt, b.rows[0]?.count[0]])).to.deep.equal([[T0 + 2 * MINUTE, 1]]);
    expect(buckets.openBuckets).to.equal(0);
  });

  it('keeps workloads of different clusters apart in one bucket', () => {
    const buckets = new BucketAccumulator({ widthMs: 1_000 });
    buckets.add({ workloadId: 'a', clusterId: 'west', gpuKey: 'GPU-a', at: T0, values: values(1, 1, 1, 1, 1) });
    buckets.add({ workloadId: 'b', clusterId: 'east', gpuKey: 'GPU-b', at: T0 + 999, values: values(2, 2, 2, 2, 2) });
    expect(buckets.takeAll()[0]?.rows.map((r) => [r.workloadId, r.clusterId, r.sum[0]])).to.deep.equal([['a', 'west', 1], ['b', 'east', 2]]);
  });

  it('refuses a bucket width that is not a positive whole number of milliseconds', () => {
    expect(() => new BucketAccumulator({ widthMs: 0 })).to.throw('Cannot summarize GPU samples: the bucket width must be a positive whole number of ms, got 0');
  });
});
