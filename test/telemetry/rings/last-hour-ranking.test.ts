// Rankings read per-workload last-hour totals that the rings keep as samples arrive and leave. They
// must answer what a walk of every GPU's raw hour answers (RingModel), as samples come in, as time
// passes without samples, across workload switches, ring overwrites and pruning.
import { expect } from 'chai';
import { METRIC_NAMES, type MetricName } from '../../../src/domain/metrics.js';
import { rawSlotsFor } from '../../../src/telemetry/rings/gpu-rings.js';
import { encodeMetric, METRIC_COUNT, METRIC_SLOT, MISSING } from '../../../src/telemetry/rings/metric-codec.js';
import { fleetAndModel } from '../ring-model.js';

const T0 = 1_764_003_600;
const HOUR = 3600;
const UTIL = METRIC_SLOT.gpu_utilization;

function stored(value: number, overrides: Partial<Record<MetricName, number>> = {}): Uint16Array {
  const values = new Uint16Array(METRIC_COUNT);
  METRIC_NAMES.forEach((name, slot) => (values[slot] = encodeMetric(slot, overrides[name] ?? value)));
  return values;
}

function pair(rawSlots = rawSlotsFor(15)) {
  const both = fleetAndModel(rawSlots);
  const { fleet } = both;
  return {
    ...both,
    rank(to: number, slot = UTIL) {
      return Object.fromEntries(fleet.rank(slot, { from: to - HOUR, to }));
    },
  };
}

describe('last-hour rankings from running totals', () => {
  it('ranks a sample as soon as it is recorded', () => {
    const p = pair();
    p.record('GPU-a', T0, 'w1', stored(20));
    expect(p.rank(T0)).to.deep.equal({ w1: { avg: 20, current: 20 } });
    p.record('GPU-a', T0 + 15, 'w1', stored(40));
    p.record('GPU-b', T0 + 15, 'w2', stored(70));
    expect(p.rank(T0 + 15)).to.deep.equal({ w1: { avg: 30, current: 40 }, w2: { avg: 70, current: 70 } });
  });

  it('counts a sample exactly an hour old and lets it go a second later', () => {
    const p = pair();
    p.record('GPU-a', T0, 'w1', stored(20));
    p.record('GPU-a', T0 + 1800, 'w1', stored(40));
    expect(p.rank(T0 + HOUR)).to.deep.equal({ w1: { avg: 30, current: 40 } });
    expect(p.rank(T0 + HOUR + 1)).to.deep.equal({ w1: { avg: 40, current: 40 } });
  });

  it('lets samples leave the hour as time passes without new ones; current follows the GPUs still reporting', () => {
    const p = pair();
    // GPU-a reports from T0 to T0 + 10 min, GPU-b (same workload) until T0 + 50 min.
    for (let t = T0; t <= T0 + 600; t += 15) p.record('GPU-a', t, 'w1', stored(10));
    for (let t = T0; t <= T0 + 3000; t += 15) p.record('GPU-b', t, 'w1', stored(50));
    p.record('GPU-c', T0, 'w2', stored(99));
    expect(p.rank(T0 + 3000)).to.deep.equal(p.model.rank(UTIL, T0 + 3000));
    expect(p.rank(T0 + 3000).w1?.current).to.equal(30);
    // An hour after GPU-a's last sample only GPU-b's samples remain, and w2 has none left.
    expect(p.rank(T0 + 600 + HOUR + 1)).to.deep.equal({ w1: { avg: 50, current: 50 } });
    expect(p.rank(T0 + 3000 + HOUR + 1)).to.deep.equal({});
  });

  it('a ranking asked for an earlier time than a previous one answers for that time', () => {
    const p = pair();
    for (let t = T0; t <= T0 + 1800; t += 15) p.record('GPU-a', t, 'w1', stored(t < T0 + 900 ? 10 : 30));
    expect(p.rank(T0 + 900 + HOUR)).to.deep.equal({ w1: { avg: 30, current: 30 } });
    expect(p.rank(T0 + 1800)).to.deep.equal(p.model.rank(UTIL, T0 + 1800));
    expect(p.rank(T0 + 1800).w1?.avg).to.equal(20.08); // 60 samples of 10, 61 of 30
    // Before the newest sample: it is not counted.
    expect(p.rank(T0 + 1000)).to.deep.equal(p.model.rank(UTIL, T0 + 1000));
  });

  it('a GPU passing to another workload within the hour counts for both, each with its own latest', () => {
    const p = pair();
    for (let t = T0; t < T0 + 1200; t += 15) p.record('GPU-a', t, 'w1', stored(80));
    for (let t = T0 + 1200; t < T0 + 1500; t += 15) p.record('GPU-a', t, undefined, stored(0));
    for (let t = T0 + 1500; t <= T0 + 2400; t += 15) p.record('GPU-a', t, 'w2', stored(t % 2 === 0 ? 30 : 31));
    for (let t = T0; t <= T0 + 2400; t += 15) p.record('GPU-b', t, 'w2', stored(60));
    const ranked = p.rank(T0 + 2400);
    expect(ranked).to.deep.equal(p.model.rank(UTIL, T0 + 2400));
    expect(ranked.w1).to.deep.equal({ avg: 80, current: 80 });
    expect(p.rank(T0 + 1200 + HOUR)).to.deep.equal(p.model.rank(UTIL, T0 + 1200 + HOUR));
    expect(p.rank(T0 + 1200 + HOUR)).to.not.have.property('w1');
  });

  it('samples the raw ring overwrote before the hour was out no longer count', () => {
    const p = pair(8);
    for (let t = T0; t <= T0 + 300; t += 15) p.record('GPU-a', t, 'w1', stored(t < T0 + 150 ? 90 : 10));
    expect(p.rank(T0 + 300)).to.deep.equal({ w1: { avg: 10, current: 10 } });
  });

  it('a metric missing from some samples is ranked over the samples that have it, and not at all without any', () => {
    const p = pair();
    p.record('GPU-a', T0, 'w1', stored(20, { power_usage: 300 }));
    p.record('GPU-a', T0 + 15, 'w1', stored(40, { power_usage: NaN, temperature: NaN }));
    p.record('GPU-b', T0 + 15, 'w2', stored(50, { power_usage: NaN }));
    p.record('GPU-c', T0 + 30, 'w3', stored(10, { power_usage: 200 }));
    p.record('GPU-c', T0 + HOUR, 'w3', stored(10, { power_usage: NaN }));
    p.record('GPU-d', T0 + HOUR, 'w3', stored(10, { power_usage: 150 }));
    p.record('GPU-a', T0 + HOUR, 'w1', stored(40, { power_usage: 100 }));
    p.record('GPU-b', T0 + HOUR, 'w1', stored(40, { power_usage: NaN }));
    expect(p.rank(T0 + HOUR, METRIC_SLOT.power_usage)).to.deep.equal({ w1: { avg: 200, current: 100 }, w3: { avg: 175, current: 175 } });
    expect(p.rank(T0 + HOUR, METRIC_SLOT.temperature)).to.deep.equal(p.model.rank(METRIC_SLOT.temperature, T0 + HOUR));
    // Once the first samples leave the hour: w1 keeps GPU-a's newest reading; w3's GPU-c, still
    // reporting, has no power reading left, so w3's current is GPU-d's alone.
    expect(p.rank(T0 + HOUR + 31, METRIC_SLOT.power_usage)).to.deep.equal({ w1: { avg: 100, current: 100 }, w3: { avg: 150, current: 150 } });
    expect(p.rank(T0 + HOUR + 31, METRIC_SLOT.temperature)).to.deep.equal(p.model.rank(METRIC_SLOT.temperature, T0 + HOUR + 31));
  });

  it('pruning a silent GPU takes its samples out; a GPU seen again starts afresh', () => {
    const p = pair();
    p.record('GPU-a', T0, 'w1', stored(20));
    p.record('GPU-b', T0 + 25 * HOUR, 'w2', stored(30));
    expect(p.fleet.prune(T0 + 25 * HOUR)).to.deep.equal({ gpus: 1, workloads: 1 });
    expect(p.fleet.stats().lastHourWorkloads).to.equal(1);
    p.record('GPU-a', T0 + 25 * HOUR + 15, 'w1', stored(60));
    expect(p.rank(T0 + 25 * HOUR + 15)).to.deep.equal({ w1: { avg: 60, current: 60 }, w2: { avg: 30, current: 30 } });
    expect(p.fleet.stats().lastHourWorkloads).to.equal(2);
    // An hour later, with no sample since, the ranking empties the totals.
    expect(p.rank(T0 + 27 * HOUR)).to.deep.equal({});
    expect(p.fleet.stats().lastHourWorkloads).to.equal(0);
  });

  it('matches a walk of every raw hour on random streams, ranked as time goes on', () => {
    let seed = 11;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    for (let stream = 0; stream < 20; stream += 1) {
      const p = pair(pick([16, rawSlotsFor(15)]));
      const gpus = ['GPU-a', 'GPU-b', 'GPU-c'];
      const owners = new Map(gpus.map((g) => [g, pick(['w1', 'w2', 'w3', undefined])]));
      const times = new Map(gpus.map((g) => [g, T0]));
      let now = T0;
      for (let step = 0; step < 600; step += 1) {
        const key = pick(gpus);
        const time = (times.get(key) ?? T0) + pick([15, 15, 15, 0, 60, 900, 4000]);
        times.set(key, time);
        if (random() < 0.03) owners.set(key, pick(['w1', 'w2', 'w3', undefined]));
        const values = new Uint16Array(METRIC_COUNT);
        for (let m = 0; m < METRIC_COUNT; m += 1) values[m] = random() < 0.1 ? MISSING : Math.floor(random() * 10_000);
        p.record(key, time, owners.get(key), values);
        now = Math.max(now, time);
        if (random() < 0.1) {
          const to = now + pick([0, 0, 15, 600, 3000, -30]);
          const slot = pick([0, 1, 2, 3, 4]);
          expect(p.rank(to, slot), `stream ${stream}, step ${step}, slot ${slot}`).to.deep.equal(p.model.rank(slot, to));
        }
      }
    }
  });
});
