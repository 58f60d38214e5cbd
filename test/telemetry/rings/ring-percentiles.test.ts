// Percentiles read from the rings (GpuFleet.countValues): over the raw hour, exactly the nearest rank
// of every sample the summary reads; over 6 and 24 hours, the nearest rank of the buckets' means
// weighted by their counts, which lies within the widest bucket's max − min of the exact percentile.
// RingModel is the plain reading the fleet must agree with, switches, gaps and refusals included.
import { expect } from 'chai';
import { METRIC_NAMES, type MetricName } from '../../../src/domain/metrics.js';
import { PERCENTILES } from '../../../src/domain/percentiles.js';
import { GpuFleet } from '../../../src/telemetry/rings/gpu-fleet.js';
import { rawSlotsFor, type Resolution } from '../../../src/telemetry/rings/gpu-rings.js';
import { decodeMetric, encodeMetric, METRIC_COUNT, METRIC_SLOT, MISSING } from '../../../src/telemetry/rings/metric-codec.js';
import { takeHistograms } from '../../../src/telemetry/summaries/percentile-histogram.js';
import { fleetAndModel } from '../ring-model.js';

// T0 is an hour boundary far from 0.
const T0 = 1_764_003_600;
const HOUR = 3600;
const DAY = 24 * HOUR;

const gpu = (key: string) => ({ key, clusterId: 'c1', hostname: 'node-1', modelName: 'H100' });

function sample(value: number): Uint16Array {
  const stored = new Uint16Array(METRIC_COUNT);
  METRIC_NAMES.forEach((_, slot) => (stored[slot] = encodeMetric(slot, value)));
  return stored;
}

/** The stored value at each of PERCENTILES, per metric slot, as the fleet counts the window. */
function fleetPercentiles(fleet: GpuFleet, owner: string, window: { from: number; to: number }, resolution?: Resolution): number[][] {
  const histograms = takeHistograms();
  fleet.countValues(owner, window, histograms, resolution);
  return Array.from({ length: METRIC_COUNT }, (_, slot) => histograms.percentiles(slot, PERCENTILES));
}

/** One metric's percentiles in reported units. */
function reported(fleet: GpuFleet, owner: string, window: { from: number; to: number }, metric: MetricName = 'gpu_utilization'): number[] {
  const slot = METRIC_SLOT[metric];
  return (fleetPercentiles(fleet, owner, window)[slot] ?? []).map((v) => decodeMetric(slot, v));
}

/** The nearest-rank percentile by sorting values given with weights. */
function nearestBySorting(weighted: readonly [value: number, weight: number][], percentile: number): number {
  const sorted = [...weighted].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((n, [, w]) => n + w, 0);
  const rank = Math.max(1, Math.ceil((percentile * total) / 100));
  let below = 0;
  for (const [value, weight] of sorted) {
    below += weight;
    if (below >= rank) return value;
  }
  throw new Error('empty');
}

describe('percentiles from the rings', () => {
  it('last hour: exactly the nearest rank over every raw sample of every GPU', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    [10, 20, 30].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    [50, 70].forEach((v, i) => fleet.record(gpu('GPU-b'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    // 5 samples: p50 is the 3rd (30), p75 the 4th (50), p90 and above the 5th (70).
    expect(reported(fleet, 'w1', { from: T0 + 30 - HOUR, to: T0 + 30 })).to.deep.equal([30, 50, 70, 70, 70]);
    // Power is kept to 0.1 W: its percentiles too.
    expect(reported(fleet, 'w1', { from: T0 + 30 - HOUR, to: T0 + 30 }, 'power_usage')).to.deep.equal([30, 50, 70, 70, 70]);
    expect(reported(fleet, 'w-unknown', { from: T0 - HOUR, to: T0 + 30 })).to.deep.equal([]);
  });

  it('last hour: the samples of whole minutes one by one, not the minute\'s mean', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    // A whole minute (the raw read sums it from its 1-minute bucket) and two minutes after it.
    [0, 10, 90, 100].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    fleet.record(gpu('GPU-a'), { time: T0 + 120, stored: sample(100), workloadId: 'w1' });
    expect(reported(fleet, 'w1', { from: T0 + 120 - HOUR, to: T0 + 120 })).to.deep.equal([90, 100, 100, 100, 100]);
  });

  it('six hours: each 1-minute bucket as its mean weighted by its count, within the widest bucket\'s spread of the exact', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    // The minute at T0 holds 10, 20, 30, 40 (mean 25, spread 30); two hours later one holds 80, 100 (mean 90, spread 20).
    [10, 20, 30, 40].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    [80, 100].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + 2 * HOUR + i * 15, stored: sample(v), workloadId: 'w1' }));
    const now = T0 + 2 * HOUR + 15;
    // 25 × 4, 90 × 2: p50 (3rd of 6) 25, p75 (5th) 90. Exact: 30 and 80, each within 30 of it.
    expect(reported(fleet, 'w1', { from: now - 6 * HOUR, to: now })).to.deep.equal([25, 90, 90, 90, 90]);
    // The same samples over 24 hours: the 5-minute buckets hold the same groups here.
    expect(reported(fleet, 'w1', { from: now - DAY, to: now })).to.deep.equal([25, 90, 90, 90, 90]);
  });

  it('a bucket of one value (a GPU held steady) gives exact percentiles at every resolution', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    for (let i = 0; i < 40; i += 1) {
      fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(12.5), workloadId: 'w1' });
      fleet.record(gpu('GPU-b'), { time: T0 + i * 15, stored: sample(87.25), workloadId: 'w1' });
      fleet.record(gpu('GPU-c'), { time: T0 + i * 15, stored: sample(87.25), workloadId: 'w1' });
    }
    const now = T0 + 39 * 15;
    for (const span of [HOUR, 6 * HOUR, DAY]) expect(reported(fleet, 'w1', { from: now - span, to: now }), `span ${span}`).to.deep.equal([87.25, 87.25, 87.25, 87.25, 87.25]);
    expect(reported(fleet, 'w1', { from: now - HOUR, to: now }, 'power_usage')).to.deep.equal([87.3, 87.3, 87.3, 87.3, 87.3]);
  });

  it('a whole lifetime: every value of the owner the chosen resolution holds, whatever the window', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    [10, 20, 30].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    fleet.record(gpu('GPU-a'), { time: T0 + 45, stored: sample(99), workloadId: 'w2' });
    const all = { from: -Infinity, to: Infinity };
    expect((fleetPercentiles(fleet, 'w1', all, 'raw')[0] ?? []).map((v) => decodeMetric(0, v))).to.deep.equal([20, 30, 30, 30, 30]);
    // w2 took the GPU inside w1's minute: the 1-minute bucket restarted for w2 and w1's share is gone.
    expect(fleetPercentiles(fleet, 'w1', all, 0)[0]).to.deep.equal([]);
    expect((fleetPercentiles(fleet, 'w2', all, 1)[0] ?? []).map((v) => decodeMetric(0, v))).to.deep.equal([99, 99, 99, 99, 99]);
  });

  it('matches the plain reading on random streams, and stays within the widest bucket\'s spread of the exact percentile', () => {
    let seed = 18;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    let compared = 0;
    for (let stream = 0; stream < 20; stream += 1) {
      const p = fleetAndModel(pick([20, rawSlotsFor(15)]));
      const owners = ['w1', 'w2', undefined];
      let time = T0 + Math.floor(random() * HOUR);
      let owner = pick(owners);
      const steps = 200 + Math.floor(random() * 1500);
      for (let step = 0; step < steps; step += 1) {
        time += pick([15, 15, 15, 15, 0, 5, 60, 300, 2000, 14_000]);
        if (random() < 0.02) owner = pick(owners);
        const values = new Uint16Array(METRIC_COUNT);
        for (let m = 0; m < METRIC_COUNT; m += 1) values[m] = random() < 0.05 ? MISSING : Math.floor(random() * 10_000);
        p.record(pick(['GPU-a', 'GPU-b']), time, owner, values);
      }
      for (let read = 0; read < 10; read += 1) {
        const to = time - pick([0, 0, 1, 59, 299, 1800, 3599, 7000]);
        const from = to - pick([HOUR, 6 * HOUR, DAY]) + pick([0, 0, 1, 30, 299]);
        for (const workload of ['w1', 'w2']) {
          const got = fleetPercentiles(p.fleet, workload, { from, to });
          p.model.valueGroups(workload, from, to).forEach((groups, slot) => {
            const where = `stream ${stream}, ${workload}, slot ${slot}, [${from - T0}, ${to - T0}]`;
            if (groups.length === 0) {
              expect(got[slot], where).to.deep.equal([]);
              return;
            }
            const means = groups.map((g): [number, number] => [Math.round(g.reduce((a, b) => a + b, 0) / g.length), g.length]);
            const exact = groups.flat().map((v): [number, number] => [v, 1]);
            const bound = Math.max(...groups.map((g) => Math.max(...g) - Math.min(...g)));
            PERCENTILES.forEach((percentile, i) => {
              const value = got[slot]?.[i] as number;
              expect(value, `${where} p${percentile}`).to.equal(nearestBySorting(means, percentile));
              expect(Math.abs(value - nearestBySorting(exact, percentile)), `${where} p${percentile} bound ${bound}`).to.be.at.most(bound);
            });
            compared += 1;
          });
        }
      }
    }
    expect(compared).to.be.greaterThan(500);
  });
});
