import { expect } from 'chai';
import { METRIC_NAMES, type MetricName } from '../../../src/domain/metrics.js';
import { GpuFleet, resolutionFor } from '../../../src/telemetry/rings/gpu-fleet.js';
import { GpuRings, rawSlotsFor } from '../../../src/telemetry/rings/gpu-rings.js';
import { encodeMetric, METRIC_COUNT, METRIC_SLOT, MISSING } from '../../../src/telemetry/rings/metric-codec.js';
import { WindowSummary } from '../../../src/telemetry/summaries/window-summary.js';

// Times in seconds; T0 is a minute boundary (and a 5-minute one) far from 0.
const T0 = 1_764_000_000;
const HOUR = 3600;

/** Stored values for one sample: every metric set to `value` unless overridden (NaN: missing). */
function sample(value: number, overrides: Partial<Record<MetricName, number>> = {}): Uint16Array {
  const stored = new Uint16Array(METRIC_COUNT);
  METRIC_NAMES.forEach((name, slot) => (stored[slot] = encodeMetric(slot, overrides[name] ?? value)));
  return stored;
}

const gpu = (key: string) => ({ key, clusterId: 'c1', hostname: 'node-1', modelName: 'H100' });

function summaryOf(fleet: GpuFleet, workloadId: string, from: number, to: number, metric: MetricName = 'gpu_utilization') {
  const into = new WindowSummary();
  fleet.collect(workloadId, { from, to }, into);
  return into.summary(METRIC_SLOT[metric]);
}

describe('GPU rings and window summaries', () => {
  it('last hour: avg, min and max over every raw sample of every GPU, current = mean of each GPU\'s latest', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    [10, 20, 30].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    [50, 70].forEach((v, i) => fleet.record(gpu('GPU-b'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    expect(summaryOf(fleet, 'w1', T0 + 30 - HOUR, T0 + 30)).to.deep.equal({ avg: 36, min: 10, max: 70, current: 50 });
  });

  it('includes a sample exactly at the window start and leaves out one a second earlier', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0 - 1, stored: sample(90), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(40), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0 + HOUR, stored: sample(60), workloadId: 'w1' });
    expect(summaryOf(fleet, 'w1', T0, T0 + HOUR)).to.deep.equal({ avg: 50, min: 40, max: 60, current: 60 });
  });

  it('answers null for every value when the window holds no sample of the workload', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(40), workloadId: 'w1' });
    expect(summaryOf(fleet, 'w1', T0 + 10, T0 + HOUR)).to.deep.equal({ avg: null, min: null, max: null, current: null });
    expect(summaryOf(fleet, 'w-unknown', T0 - HOUR, T0)).to.deep.equal({ avg: null, min: null, max: null, current: null });
  });

  it('a metric the exporter does not report stays null while the others have values', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a/13'), { time: T0, stored: sample(25, { temperature: NaN, power_usage: NaN }), workloadId: 'w1' });
    expect(summaryOf(fleet, 'w1', T0 - HOUR, T0, 'temperature').avg).to.equal(null);
    expect(summaryOf(fleet, 'w1', T0 - HOUR, T0, 'power_usage').current).to.equal(null);
    expect(summaryOf(fleet, 'w1', T0 - HOUR, T0, 'gpu_usage')).to.deep.equal({ avg: 25, min: 25, max: 25, current: 25 });
  });

  it('six hours: 1-minute buckets that start inside the window, a gap of hours leaving no trace', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    // 4 samples in the minute at T0 (10, 20, 30, 40), nothing for 2 hours, then 2 samples (80, 100).
    [10, 20, 30, 40].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + i * 15, stored: sample(v), workloadId: 'w1' }));
    [80, 100].forEach((v, i) => fleet.record(gpu('GPU-a'), { time: T0 + 2 * HOUR + i * 15, stored: sample(v), workloadId: 'w1' }));
    const now = T0 + 2 * HOUR + 15;
    expect(resolutionFor(6 * HOUR)).to.equal(0);
    expect(summaryOf(fleet, 'w1', now - 6 * HOUR, now)).to.deep.equal({ avg: 46.67, min: 10, max: 100, current: 100 });
    // The last hour sees only the two late samples (raw).
    expect(summaryOf(fleet, 'w1', now - HOUR, now)).to.deep.equal({ avg: 90, min: 80, max: 100, current: 100 });
    // A 6-hour window starting one second after T0's minute began leaves that whole bucket out.
    expect(summaryOf(fleet, 'w1', T0 + 1, T0 + 1 + 6 * HOUR)).to.deep.equal({ avg: 90, min: 80, max: 100, current: 100 });
  });

  it('twenty-four hours: 5-minute buckets, with the 1-minute ring long overwritten', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(20), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0 + 60, stored: sample(40), workloadId: 'w1' });
    // 7 hours later the 1-minute slot of T0 has been reused (360 slots = 6 h).
    fleet.record(gpu('GPU-a'), { time: T0 + 6 * HOUR, stored: sample(90), workloadId: 'w1' });
    const now = T0 + 7 * HOUR;
    expect(resolutionFor(24 * HOUR)).to.equal(1);
    expect(summaryOf(fleet, 'w1', now - 24 * HOUR, now)).to.deep.equal({ avg: 50, min: 20, max: 90, current: 90 });
    expect(summaryOf(fleet, 'w1', now - 6 * HOUR, now)).to.deep.equal({ avg: 90, min: 90, max: 90, current: 90 });
  });

  it('a 1-minute slot reused after 6 hours no longer answers for its old minute', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(10), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0 + 6 * HOUR, stored: sample(70), workloadId: 'w1' }); // same slot, 360 minutes later
    expect(summaryOf(fleet, 'w1', T0 - 60, T0 + 5 * HOUR)).to.deep.equal({ avg: null, min: null, max: null, current: null });
  });

  it('a GPU passing to another workload keeps each workload\'s samples apart', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(90), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0 + 15, stored: sample(80), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0 + 30, stored: sample(0), workloadId: undefined });
    fleet.record(gpu('GPU-a'), { time: T0 + 45, stored: sample(30), workloadId: 'w2' });
    const now = T0 + 45;
    expect(summaryOf(fleet, 'w1', now - HOUR, now)).to.deep.equal({ avg: 85, min: 80, max: 90, current: 80 });
    expect(summaryOf(fleet, 'w2', now - HOUR, now)).to.deep.equal({ avg: 30, min: 30, max: 30, current: 30 });
    // The shared minute bucket restarted for w2: in the 6-hour view w1 loses its partial minute, w2 is exact.
    expect(summaryOf(fleet, 'w2', now - 6 * HOUR, now)).to.deep.equal({ avg: 30, min: 30, max: 30, current: 30 });
    expect(summaryOf(fleet, 'w1', now - 6 * HOUR, now).avg).to.equal(null);
  });

  it('drops a sample older than the newest one of its GPU', () => {
    const rings = new GpuRings({ rawSlots: rawSlotsFor(15) });
    expect(rings.record(T0 + 15, 1, sample(50))).to.equal(true);
    expect(rings.record(T0, 1, sample(99))).to.equal(false);
    const into = new WindowSummary();
    rings.collect('raw', { owner: 1, from: T0 - HOUR, to: T0 + HOUR }, into);
    expect(into.summary(0).max).to.equal(50);
  });

  it('keeps an hour of raw samples and overwrites the oldest beyond that', () => {
    const slots = rawSlotsFor(60); // 64
    const rings = new GpuRings({ rawSlots: slots });
    for (let i = 0; i < slots + 10; i += 1) rings.record(T0 + i * 60, 1, sample(i < 10 ? 100 : 1));
    const into = new WindowSummary();
    rings.collect('raw', { owner: 1, from: 0, to: T0 + 10 * HOUR }, into);
    expect(into.summary(0)).to.include({ max: 1, min: 1 });
  });

  it('stores values at 0.01 (power 0.1 W) and clamps what the 16 bits cannot hold', () => {
    expect(encodeMetric(METRIC_SLOT.gpu_utilization, 99.994)).to.equal(9999);
    expect(encodeMetric(METRIC_SLOT.power_usage, 409.692)).to.equal(4097);
    expect(encodeMetric(METRIC_SLOT.power_usage, 1e9)).to.equal(0xfffe);
    expect(encodeMetric(METRIC_SLOT.temperature, -5)).to.equal(0);
    expect(encodeMetric(METRIC_SLOT.temperature, NaN)).to.equal(MISSING);
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(0, { power_usage: 409.692 }), workloadId: 'w1' });
    expect(summaryOf(fleet, 'w1', T0 - HOUR, T0, 'power_usage')).to.deep.equal({ avg: 409.7, min: 409.7, max: 409.7, current: 409.7 });
  });

  it('ranks every attributed workload by its raw samples of the last hour', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0 - 2 * HOUR, stored: sample(100), workloadId: 'w1' }); // outside the hour
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(20), workloadId: 'w1' });
    fleet.record(gpu('GPU-a'), { time: T0 + 15, stored: sample(40), workloadId: 'w1' });
    fleet.record(gpu('GPU-b'), { time: T0 + 15, stored: sample(70), workloadId: 'w2' });
    fleet.record(gpu('GPU-c'), { time: T0 + 15, stored: sample(10), workloadId: 'w2' });
    fleet.record(gpu('GPU-d'), { time: T0 + 15, stored: sample(99), workloadId: undefined });
    const ranked = fleet.rank(METRIC_SLOT.gpu_utilization, { from: T0 + 15 - HOUR, to: T0 + 15 });
    expect(Object.fromEntries(ranked)).to.deep.equal({ w1: { avg: 30, current: 40 }, w2: { avg: 40, current: 40 } });
  });

  it('forgets GPUs and workloads silent for more than 24 hours', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(10), workloadId: 'w1' });
    fleet.record(gpu('GPU-b'), { time: T0 + 20 * HOUR, stored: sample(10), workloadId: 'w2' });
    expect(fleet.prune(T0 + 25 * HOUR)).to.deep.equal({ gpus: 1, workloads: 1 });
    expect(fleet.stats()).to.include({ gpus: 1, workloads: 1 });
  });

  it('gives a forgotten GPU\'s slot to the next new GPU with none of the old samples in it', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.reserve(2);
    fleet.record(gpu('GPU-a'), { time: T0, stored: sample(90), workloadId: 'w1' });
    fleet.record(gpu('GPU-c'), { time: T0 + 20 * HOUR, stored: sample(50), workloadId: 'w2' });
    const later = T0 + 25 * HOUR;
    expect(fleet.prune(later)).to.deep.equal({ gpus: 1, workloads: 1 });
    fleet.record(gpu('GPU-b'), { time: later, stored: sample(10), workloadId: 'w1' });
    expect(fleet.stats()).to.include({ gpus: 2, ringReservedBytes: fleet.stats().ringBytes });
    expect(summaryOf(fleet, 'w1', later - 24 * HOUR, later)).to.deep.equal({ avg: 10, min: 10, max: 10, current: 10 });
    expect(summaryOf(fleet, 'w1', later - HOUR, later)).to.deep.equal({ avg: 10, min: 10, max: 10, current: 10 });
  });

  it('carves every GPU\'s rings out of the reservation made before they arrive', () => {
    const fleet = new GpuFleet({ rawSlots: rawSlotsFor(15) });
    fleet.reserve(16);
    const reserved = fleet.stats().ringReservedBytes;
    for (let i = 0; i < 16; i += 1) fleet.record(gpu(`GPU-${i}`), { time: T0, stored: sample(i), workloadId: `w${i}` });
    expect(fleet.stats()).to.include({ gpus: 16, ringBytes: reserved, ringReservedBytes: reserved });
    for (let i = 0; i < 16; i += 1) expect(summaryOf(fleet, `w${i}`, T0 - HOUR, T0).avg).to.equal(i);
  });

  it('holds a GPU\'s 24 hours in under 48 KiB at the default 15 s interval', () => {
    const rings = new GpuRings({ rawSlots: rawSlotsFor(15) });
    expect(rings.byteLength).to.be.below(48 * 1024);
  });
});
