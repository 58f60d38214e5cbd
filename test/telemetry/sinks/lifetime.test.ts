import { expect } from 'chai';
import type { GpuUsage } from '../../../src/domain/gpu-usage.js';
import { METRIC_NAMES } from '../../../src/domain/metrics.js';
import type { LifetimeRepository, LifetimeSave, LifetimeTotals } from '../../../src/domain/telemetry.js';
import { LifetimeAccumulators, summarizeTotals, type LifetimeAccumulatorsOptions } from '../../../src/telemetry/sinks/lifetime.js';
import { METRIC_COUNT, METRIC_SLOT } from '../../../src/telemetry/rings/metric-codec.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { SqliteLifetimeStore } from '../../../src/store/sqlite/lifetime-store.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { tempDir } from '../../store/temp-store.js';
import { sqliteOnly } from '../../support/backend.js';
import { usageOf } from '../../support/gpu-usage.js';

function values(utilization: number, power = NaN): Float64Array {
  const v = new Float64Array(METRIC_COUNT).fill(NaN);
  v[METRIC_SLOT.gpu_utilization] = utilization;
  v[METRIC_SLOT.power_usage] = power;
  return v;
}

const USAGE_RULES = { intervalSeconds: 15, idleThresholdPercent: 5 };
const T0 = Date.parse('2026-11-20T10:00:00Z');
/** A plain sample of the tick started at `at`. */
const tick = (at: number) => ({ at, mig: false, xidError: false });

sqliteOnly.describe('lifetime totals (job_lifetime)', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('survive a restart: totals saved by one process go on accumulating in the next', () => {
    const path = `${dir.dir}/index.db`;
    const clock = new FixedClock(Date.parse('2026-11-20T10:00:00Z'));
    let db = openDatabase(path);
    let lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000, ...USAGE_RULES });
    lifetimes.add('w1', 'GPU-a', values(10, 300), tick(clock.now()));
    lifetimes.add('w1', 'GPU-b', values(30, 100), tick(clock.now()));
    expect(lifetimes.flush()).to.equal(1);
    db.close();

    db = openDatabase(path);
    lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000, ...USAGE_RULES });
    // Before any new sample, the saved totals answer, current included.
    expect(summarizeTotals(lifetimes.totals('w1'), ['gpu_utilization'])).to.deep.equal({ gpu_utilization: { avg: 20, min: 10, max: 30, current: 20 } });
    lifetimes.add('w1', 'GPU-a', values(80), tick(clock.now()));
    expect(summarizeTotals(lifetimes.totals('w1'), ['gpu_utilization', 'power_usage'])).to.deep.equal({
      gpu_utilization: { avg: 40, min: 10, max: 80, current: 80 },
      power_usage: { avg: 200, min: 100, max: 300, current: 200 },
    });
    db.close();
  });

  it('adds each flush\'s usage to what the index holds, across a restart', () => {
    const path = `${dir.dir}/index.db`;
    const clock = new FixedClock(T0);
    const usageRow = (db: ReturnType<typeof openDatabase>) =>
      db.prepare('SELECT util_seconds, util_weighted, idle_seconds, power_seconds, energy_dj, gpu_errors FROM workload_usage WHERE workload_id = ?').get('w1');
    let db = openDatabase(path);
    let lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000, ...USAGE_RULES });
    lifetimes.add('w1', 'GPU-a', values(2, 300), tick(T0));
    lifetimes.add('w1', 'GPU-a', values(4, 300), tick(T0 + 15_000));
    clock.set(T0 + 60_000);
    lifetimes.flush();
    db.close();

    db = openDatabase(path);
    lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000, ...USAGE_RULES });
    lifetimes.add('w1', 'GPU-a', values(80), { at: T0 + 60_000, mig: false, xidError: true });
    lifetimes.flush();
    expect(usageRow(db)).to.deep.equal({ util_seconds: 45, util_weighted: (200 + 400 + 8000) * 15, idle_seconds: 30, power_seconds: 30, energy_dj: 3000 * 30, gpu_errors: 1 });
    db.close();
  });

  it('answers null for every metric of a workload never sampled', () => {
    const db = openDatabase(`${dir.dir}/index.db`);
    const lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock: new FixedClock(0), idleMs: 1, ...USAGE_RULES });
    const summary = summarizeTotals(lifetimes.totals('nobody'), METRIC_NAMES);
    for (const name of METRIC_NAMES) expect(summary[name], name).to.deep.equal({ avg: null, min: null, max: null, current: null });
    db.close();
  });

  it('lets go of an idle workload after its flush and reads it back from the index', () => {
    const db = openDatabase(`${dir.dir}/index.db`);
    const clock = new FixedClock(Date.parse('2026-11-20T10:00:00Z'));
    const lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000, ...USAGE_RULES });
    lifetimes.add('w1', 'GPU-a', values(50), tick(clock.now()));
    lifetimes.flush();
    expect(lifetimes.size).to.equal(1);
    clock.advance(120_000);
    expect(lifetimes.flush()).to.equal(0);
    expect(lifetimes.size).to.equal(0);
    expect(summarizeTotals(lifetimes.totals('w1'), ['gpu_utilization']).gpu_utilization).to.deep.equal({ avg: 50, min: 50, max: 50, current: 50 });
    db.close();
  });

  it('deletes a workload\'s totals with its row (retention)', () => {
    const db = openDatabase(`${dir.dir}/index.db`);
    const store = new SqliteLifetimeStore(db);
    store.saveLifetimes([{ workloadId: 'w1', totals: { gpu_utilization: { count: 1, sum: 5, min: 5, max: 5, current: 5 } } }]);
    db.prepare(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by, initiative_id,
      instance_type, gpu_count, submitted_at, is_managed, updated_at) VALUES ('w1','o','c','n','x','Pod','completed','u','i','t',1,0,0,0)`).run();
    db.prepare("DELETE FROM workloads WHERE workload_id = 'w1'").run();
    expect(store.loadLifetime('w1')).to.equal(undefined);
    db.close();
  });
});

/** A repository that keeps each save as it was handed over. */
class RecordingRepository implements LifetimeRepository {
  readonly saves: LifetimeSave[][] = [];
  failNext = false;
  loadLifetime(): LifetimeTotals | undefined {
    return undefined;
  }
  saveLifetimes(entries: readonly LifetimeSave[]): void {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk I/O error');
    }
    this.saves.push(structuredClone([...entries]));
  }
  /** The usage of each workload in the last save (undefined: sent without). */
  lastUsage(): Record<string, GpuUsage | undefined> {
    return Object.fromEntries((this.saves.at(-1) ?? []).map((e) => [e.workloadId, e.usage]));
  }
}

describe('lifetime usage figures (what the GPUs did since the last save)', () => {
  let clock: FixedClock;
  let repository: RecordingRepository;
  let lifetimes: LifetimeAccumulators;
  const start = (options: Partial<LifetimeAccumulatorsOptions> = {}) => {
    clock = new FixedClock(T0);
    repository = new RecordingRepository();
    lifetimes = new LifetimeAccumulators(repository, { clock, idleMs: 15 * 60_000, ...USAGE_RULES, ...options });
  };
  beforeEach(() => start());

  it('sends the usage since the last save with the totals, then only what came after', () => {
    for (let i = 0; i < 4; i += 1) lifetimes.add('w1', 'GPU-a', values(3, 300), tick(T0 + i * 15_000));
    clock.set(T0 + 50_000);
    expect(lifetimes.flush()).to.equal(1);
    // 4 samples × 15 s; 300 (0.01 %) and 3000 (0.1 W) per second. Its minute is still open: no idle yet.
    expect(repository.saves[0]?.[0]).to.deep.equal({
      workloadId: 'w1',
      totals: { gpu_utilization: { count: 4, sum: 12, min: 3, max: 3, current: 3 }, power_usage: { count: 4, sum: 1200, min: 300, max: 300, current: 300 } },
      usage: usageOf({ utilSeconds: 60, utilWeighted: 18_000, powerSeconds: 60, energyDj: 180_000 }),
    });
    // The minute closes at the first flush at or after its end: that alone is a change to save.
    clock.set(T0 + 60_000);
    expect(lifetimes.flush()).to.equal(1);
    expect(repository.saves[1]?.[0]?.totals).to.deep.equal(repository.saves[0]?.[0]?.totals);
    expect(repository.lastUsage()).to.deep.equal({ w1: usageOf({ idleSeconds: 60 }) });
    expect(lifetimes.flush()).to.equal(0);
  });

  it('tells the listener of each idle minute as it counts it (the fleet\'s history counts it by node)', () => {
    const told: unknown[] = [];
    start({ onIdleMinute: (minute) => told.push(minute) });
    for (let i = 0; i < 4; i += 1) lifetimes.add('w1', 'GPU-a', values(3), tick(T0 + i * 15_000));
    lifetimes.add('w2', 'GPU-b', values(90), tick(T0));
    clock.set(T0 + 60_000);
    lifetimes.flush();
    expect(told).to.deep.equal([{ workloadId: 'w1', end: T0 + 60_000, idleSeconds: 60 }]);
  });

  it('judges a minute by the samples\' tick times, not by when they were ingested', () => {
    clock.set(T0 + 70_000); // scrapes of the tick at T0 + 50 s, ingested late
    lifetimes.add('w1', 'GPU-a', values(1), tick(T0 + 50_000));
    lifetimes.add('w1', 'GPU-b', values(1), tick(T0 + 65_000));
    lifetimes.flush();
    expect(repository.lastUsage()).to.deep.equal({ w1: usageOf({ utilSeconds: 30, utilWeighted: 200 * 15, idleSeconds: 15 }) });
  });

  it('sends no usage for a workload whose samples had none of its figures', () => {
    const temperatureOnly = new Float64Array(METRIC_COUNT).fill(NaN);
    temperatureOnly[METRIC_SLOT.temperature] = 60;
    lifetimes.add('w1', 'GPU-a', temperatureOnly, tick(T0));
    lifetimes.flush();
    expect(repository.saves[0]?.[0]).to.not.have.property('usage');
  });

  it('counts no power for a MIG slice, and one error per new XID', () => {
    lifetimes.add('w1', 'GPU-a/13', values(80, 300), { at: T0, mig: true, xidError: true });
    lifetimes.add('w1', 'GPU-a/13', values(80, 300), { at: T0 + 15_000, mig: true, xidError: false });
    lifetimes.flush();
    expect(repository.lastUsage()).to.deep.equal({ w1: usageOf({ utilSeconds: 30, utilWeighted: 8000 * 30, gpuErrors: 1 }) });
  });

  it('keeps the usage of a save that threw, and sends it with the next one', () => {
    lifetimes.add('w1', 'GPU-a', values(50), tick(T0));
    repository.failNext = true;
    expect(() => lifetimes.flush()).to.throw('disk I/O error');
    lifetimes.add('w1', 'GPU-a', values(50), tick(T0 + 15_000));
    clock.set(T0 + 60_000);
    lifetimes.flush();
    expect(repository.saves).to.have.length(1);
    expect(repository.lastUsage()).to.deep.equal({ w1: usageOf({ utilSeconds: 30, utilWeighted: 5000 * 30 }) });
  });

  it('keeps an idle workload while a GPU minute of it is open, and lets it go once the minute was saved', () => {
    start({ idleMs: 1 });
    lifetimes.add('w1', 'GPU-a', values(1), tick(T0 + 10_000));
    clock.set(T0 + 40_000);
    lifetimes.flush();
    expect(lifetimes.size).to.equal(1);
    clock.set(T0 + 60_000);
    expect(lifetimes.flush()).to.equal(1);
    expect(repository.lastUsage()).to.deep.equal({ w1: usageOf({ idleSeconds: 15 }) });
    expect(lifetimes.size).to.equal(0);
  });
});
