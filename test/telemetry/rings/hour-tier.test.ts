// Reads of 6 and 24 hours add whole clock hours from the hour tier, and the raw hour adds whole
// minutes from the minute buckets: the figures must be exactly those of reading every bucket (every
// sample), window boundaries, workload switches, gaps and restarts included. RingModel is that
// reading written out plainly.
import { expect } from 'chai';
import { METRIC_NAMES, type MetricName } from '../../../src/domain/metrics.js';
import { GpuRings, rawSlotsFor } from '../../../src/telemetry/rings/gpu-rings.js';
import { encodeMetric, METRIC_COUNT, METRIC_SLOT, MISSING } from '../../../src/telemetry/rings/metric-codec.js';
import { WindowSummary } from '../../../src/telemetry/summaries/window-summary.js';
import { fleetAndModel } from '../ring-model.js';

// T0 is an hour boundary far from 0.
const T0 = 1_764_003_600;
const HOUR = 3600;
const DAY = 24 * HOUR;

function stored(value: number): Uint16Array {
  const values = new Uint16Array(METRIC_COUNT);
  METRIC_NAMES.forEach((_, slot) => (values[slot] = encodeMetric(slot, value + slot)));
  return values;
}

/** A fleet and the model fed the same samples. */
function pair(rawSlots = rawSlotsFor(15)) {
  const both = fleetAndModel(rawSlots);
  const { fleet } = both;
  return {
    ...both,
    read(owner: string, from: number, to: number) {
      const into = new WindowSummary();
      fleet.collect(owner, { from, to }, into);
      return into.summaries(METRIC_NAMES);
    },
  };
}

function summary(p: ReturnType<typeof pair>, owner: string, from: number, to: number, metric: MetricName = 'gpu_utilization') {
  return p.read(owner, from, to)[metric];
}

describe('hour tier and whole-minute reads', () => {
  it('a 24-hour read starting mid-hour and mid-bucket gives exactly the 5-minute buckets\' figures', () => {
    const p = pair();
    for (let t = T0; t <= T0 + 25 * HOUR; t += 60) p.record('GPU-a', t, 'w1', stored(10 + ((t / 60) % 83)));
    const now = T0 + 25 * HOUR;
    for (const offset of [0, 1, 150, 299, 300, 450, 1799, 1800, 3599]) {
      const to = now - offset;
      expect(p.read('w1', to - DAY, to), `ending ${offset} s before the newest sample`).to.deep.equal(p.model.summary('w1', to - DAY, to));
    }
    // Spot check, by hand: from T0 + 1 h + 7.5 min, buckets from T0 + 1 h + 10 min on; the first sample is at minute 70.
    expect(summary(p, 'w1', T0 + HOUR + 450, T0 + 25 * HOUR + 450).min).to.equal(10);
  });

  it('an hour in which the GPU passed to another workload mid-bucket reads like the buckets: the old workload loses its partial bucket', () => {
    const p = pair();
    // w1 from T0 to T0 + 22 min 30 s (values 20), then w2 (values 60) until T0 + 2 h.
    for (let t = T0; t < T0 + 1350; t += 15) p.record('GPU-a', t, 'w1', stored(20));
    for (let t = T0 + 1350; t <= T0 + 2 * HOUR; t += 15) p.record('GPU-a', t, 'w2', stored(60));
    const to = T0 + 3 * HOUR;
    // The 5-minute bucket at T0 + 20 min restarted for w2: w1 keeps its 80 samples of the first 20 minutes.
    expect(summary(p, 'w1', to - DAY, to)).to.deep.equal({ avg: 20, min: 20, max: 20, current: 20 });
    expect(p.read('w1', to - DAY, to)).to.deep.equal(p.model.summary('w1', to - DAY, to));
    expect(p.read('w2', to - DAY, to)).to.deep.equal(p.model.summary('w2', to - DAY, to));
    expect(p.read('w2', to - 6 * HOUR, to)).to.deep.equal(p.model.summary('w2', to - 6 * HOUR, to));
    // The raw hour has every sample of both.
    expect(summary(p, 'w2', T0 + 2 * HOUR - HOUR, T0 + 2 * HOUR)).to.deep.equal({ avg: 60, min: 60, max: 60, current: 60 });
  });

  it('idle spells (samples of no workload) inside an hour leave that hour to the buckets', () => {
    const p = pair();
    for (let t = T0; t <= T0 + 8 * HOUR; t += 15) {
      const idle = (t - T0) % (2 * HOUR) >= 5400 && (t - T0) % (2 * HOUR) < 5700;
      p.record('GPU-a', t, idle ? undefined : 'w1', stored(idle ? 99 : 30 + ((t / 15) % 7)));
    }
    for (const to of [T0 + 8 * HOUR, T0 + 8 * HOUR - 1234]) {
      expect(p.read('w1', to - DAY, to)).to.deep.equal(p.model.summary('w1', to - DAY, to));
      expect(p.read('w1', to - 6 * HOUR, to)).to.deep.equal(p.model.summary('w1', to - 6 * HOUR, to));
    }
  });

  it('a GPU that restarted mid-bucket, after a gap, reads the same as its buckets', () => {
    const p = pair();
    for (let t = T0; t < T0 + 12 * 60; t += 15) p.record('GPU-a', t, 'w1', stored(40));
    // Silent from minute 12 to minute 41 min 15 s (mid-bucket), then back with other values.
    for (let t = T0 + 41 * 60 + 15; t <= T0 + 3 * HOUR; t += 15) p.record('GPU-a', t, 'w1', stored(70));
    for (const to of [T0 + 3 * HOUR, T0 + 3 * HOUR + 600]) {
      expect(p.read('w1', to - DAY, to)).to.deep.equal(p.model.summary('w1', to - DAY, to));
      expect(p.read('w1', to - 6 * HOUR, to)).to.deep.equal(p.model.summary('w1', to - 6 * HOUR, to));
    }
    expect(summary(p, 'w1', T0 + 3 * HOUR - DAY, T0 + 3 * HOUR).min).to.equal(40);
  });

  it('a GPU back after a day of silence in the same hour slot does not read the old day\'s hour', () => {
    const p = pair();
    for (let t = T0; t < T0 + HOUR; t += 15) p.record('GPU-a', t, 'w1', stored(10));
    // 24 h later, the same hour of the day (same hour slot): only its second half.
    for (let t = T0 + DAY + 1800; t < T0 + DAY + HOUR; t += 15) p.record('GPU-a', t, 'w1', stored(50));
    for (const to of [T0 + DAY + HOUR - 15, T0 + DAY + 900, T0 + DAY + 2000]) {
      expect(p.read('w1', to - DAY, to), `to = T0 + ${to - T0} s`).to.deep.equal(p.model.summary('w1', to - DAY, to));
    }
    // The old day's buckets from minute 15 on are in a window starting at T0 + 15 min; the new day's
    // samples took their hour slot and the slots of its own buckets, from minute 30 on.
    expect(summary(p, 'w1', T0 + 900, T0 + DAY + 900)).to.include({ min: 10, max: 10 });
    expect(summary(p, 'w1', T0 + HOUR - 15, T0 + DAY + HOUR - 15)).to.include({ min: 50, max: 50 });
  });

  it('the raw hour reads the raw samples of a minute the ring has partly overwritten', () => {
    const p = pair(20); // 20 raw slots: 5 minutes at 15 s
    for (let t = T0; t <= T0 + 600; t += 15) p.record('GPU-a', t, 'w1', stored(5 + ((t / 15) % 11)));
    for (const to of [T0 + 600, T0 + 590, T0 + 545]) {
      expect(p.read('w1', to - HOUR, to)).to.deep.equal(p.model.summary('w1', to - HOUR, to));
    }
  });

  it('a bucket that refused samples for a full count leaves its hour to the buckets', () => {
    const p = pair();
    for (let t = T0; t <= T0 + 3 * HOUR; t += 15) {
      p.record('GPU-a', t, 'w1', stored(20));
      // 300 samples with one timestamp: the minute and 5-minute buckets stop at 255.
      if (t === T0 + HOUR + 600) for (let i = 0; i < 300; i += 1) p.record('GPU-a', t, 'w1', stored(90));
    }
    const to = T0 + 3 * HOUR + 1;
    for (const span of [6 * HOUR, DAY]) expect(p.read('w1', to - span, to)).to.deep.equal(p.model.summary('w1', to - span, to));
  });

  it('a metric missing from some samples keeps its own counts and latest in every tier', () => {
    const p = pair();
    for (let t = T0; t <= T0 + 5 * HOUR; t += 15) {
      const values = stored(30 + ((t / 15) % 13));
      if ((t / 15) % 4 === 0) values[METRIC_SLOT.temperature] = MISSING;
      if (t > T0 + 4 * HOUR + 600) values[METRIC_SLOT.power_usage] = MISSING;
      p.record('GPU-a', t, 'w1', values);
    }
    const to = T0 + 5 * HOUR;
    for (const span of [HOUR, 6 * HOUR, DAY]) expect(p.read('w1', to - span, to)).to.deep.equal(p.model.summary('w1', to - span, to));
  });

  it('matches the plain reading on random streams: switches, gaps, repeats, missing values, any window', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    for (let stream = 0; stream < 25; stream += 1) {
      const p = pair(pick([20, rawSlotsFor(15)]));
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
      for (let read = 0; read < 12; read += 1) {
        const to = time - pick([0, 0, 1, 59, 299, 1800, 3599, 7000]);
        const from = to - pick([HOUR, 6 * HOUR, DAY]) + pick([0, 0, 1, 30, 299]);
        for (const workload of ['w1', 'w2']) {
          expect(p.read(workload, from, to), `stream ${stream}, ${workload}, [${from - T0}, ${to - T0}]`).to.deep.equal(p.model.summary(workload, from, to));
        }
      }
    }
  });

  it('holds a GPU\'s 24 hours, hour tier included, in under 48 KiB at the default 15 s interval and at 10 s', () => {
    expect(new GpuRings({ rawSlots: rawSlotsFor(15) }).byteLength).to.be.below(48 * 1024);
    expect(new GpuRings({ rawSlots: rawSlotsFor(10) }).byteLength).to.be.below(48 * 1024);
  });
});
