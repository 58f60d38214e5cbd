import { expect } from 'chai';
import { METRIC_NAMES } from '../../src/domain/metrics.js';
import { LifetimeAccumulators, summarizeTotals } from '../../src/telemetry/lifetime.js';
import { METRIC_COUNT, METRIC_SLOT } from '../../src/telemetry/metric-codec.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteLifetimeStore } from '../../src/store/sqlite/lifetime-store.js';
import { FixedClock } from '../support/fixed-clock.js';
import { tempDir } from '../store/temp-store.js';
import { sqliteOnly } from '../support/backend.js';

function values(utilization: number, power = NaN): Float64Array {
  const v = new Float64Array(METRIC_COUNT).fill(NaN);
  v[METRIC_SLOT.gpu_utilization] = utilization;
  v[METRIC_SLOT.power_usage] = power;
  return v;
}

sqliteOnly.describe('lifetime totals (job_lifetime)', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('survive a restart: totals saved by one process go on accumulating in the next', () => {
    const path = `${dir.dir}/index.db`;
    const clock = new FixedClock(Date.parse('2026-11-20T10:00:00Z'));
    let db = openDatabase(path);
    let lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000 });
    lifetimes.add('w1', 'GPU-a', values(10, 300));
    lifetimes.add('w1', 'GPU-b', values(30, 100));
    expect(lifetimes.flush()).to.equal(1);
    db.close();

    db = openDatabase(path);
    lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000 });
    // Before any new sample, the saved totals answer, current included.
    expect(summarizeTotals(lifetimes.totals('w1'), ['gpu_utilization'])).to.deep.equal({ gpu_utilization: { avg: 20, min: 10, max: 30, current: 20 } });
    lifetimes.add('w1', 'GPU-a', values(80));
    expect(summarizeTotals(lifetimes.totals('w1'), ['gpu_utilization', 'power_usage'])).to.deep.equal({
      gpu_utilization: { avg: 40, min: 10, max: 80, current: 80 },
      power_usage: { avg: 200, min: 100, max: 300, current: 200 },
    });
    db.close();
  });

  it('answers null for every metric of a workload never sampled', () => {
    const db = openDatabase(`${dir.dir}/index.db`);
    const lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock: new FixedClock(0), idleMs: 1 });
    const summary = summarizeTotals(lifetimes.totals('nobody'), METRIC_NAMES);
    for (const name of METRIC_NAMES) expect(summary[name], name).to.deep.equal({ avg: null, min: null, max: null, current: null });
    db.close();
  });

  it('lets go of an idle workload after its flush and reads it back from the index', () => {
    const db = openDatabase(`${dir.dir}/index.db`);
    const clock = new FixedClock(Date.parse('2026-11-20T10:00:00Z'));
    const lifetimes = new LifetimeAccumulators(new SqliteLifetimeStore(db), { clock, idleMs: 60_000 });
    lifetimes.add('w1', 'GPU-a', values(50));
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
