// The writer's flush of shared telemetry, on a real PostgreSQL: ended buckets only, a bucket the
// database refused kept for the next run (and bounded), the last-hour figures brought up to date,
// everything written at shutdown, and the answers the readers give from it.
import { expect } from 'chai';
import pg from 'pg';
import sinon from 'sinon';
import type { WorkloadView } from '../../../src/domain/workload.js';
import { PostgresGpuSummaries } from '../../../src/store/postgres/gpu-summaries.js';
import { BucketAccumulator } from '../../../src/telemetry/sinks/bucket-accumulator.js';
import { SharedTelemetryReader } from '../../../src/telemetry/summaries/shared-telemetry.js';
import { SummaryFlusher } from '../../../src/telemetry/sinks/summary-flusher.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);
const GRACE = 11_000;
const values = (v: number) => Float64Array.from([v, v / 2, 50, 10 * v, v]);

describe('telemetry: the writer\'s flush of shared telemetry, and the readers\' answers', function () {
  this.timeout(30_000);
  let db: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresGpuSummaries;
  let clock: FixedClock;
  let buckets: BucketAccumulator;
  let flusher: SummaryFlusher;
  let warnings: string[];
  const reader = () => new SharedTelemetryReader(store, { widthMs: MINUTE });
  const workload = { workloadId: 'job' } as WorkloadView;
  const sample = (at: number, v: number, gpuKey = 'GPU-a') => buckets.add({ workloadId: 'job', clusterId: 'west', gpuKey, at, values: values(v), mig: false, xidError: false });

  beforeEach(async function () {
    db = await freshDatabase(this);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    store = new PostgresGpuSummaries({ primary: pool, readers: pool });
    clock = new FixedClock(T0);
    buckets = new BucketAccumulator({ widthMs: MINUTE, intervalSeconds: 15, idleThresholdPercent: 5 });
    warnings = [];
    flusher = new SummaryFlusher(store, buckets, { graceMs: GRACE, clock, clusters: () => ['west'], maxQueued: 3, logger: { warn: (_o, msg) => void warnings.push(msg ?? '') } });
  });

  afterEach(async () => {
    sinon.restore();
    await pool?.end();
    await db?.drop();
  });

  it('writes a bucket once it has ended and its last scrapes are in, then answers windows, rankings and job_lifetime from it', async () => {
    sample(T0 + 15_000, 40);
    sample(T0 + 15_000, 60, 'GPU-b');
    sample(T0 + 45_000, 50);
    clock.set(T0 + MINUTE + GRACE - 1);
    expect(await flusher.flush()).to.equal(0);
    clock.set(T0 + MINUTE + GRACE);
    expect(await flusher.flush()).to.equal(1);
    const now = T0 + MINUTE + GRACE;
    const window = await reader().summarize({ workload, window: { from: now - 3_600_000, to: now }, lifetime: false, metrics: ['gpu_utilization', 'power_usage'] });
    expect(window).to.deep.equal({
      gpu_utilization: { avg: 50, min: 40, max: 60, current: 55 },
      power_usage: { avg: 500, min: 400, max: 600, current: 550 },
    });
    expect(await reader().lastHour('gpu_utilization', now)).to.deep.equal(new Map([['job', { avg: 50, current: 55 }]]));
    const lifetime = await reader().summarize({ workload, window: { from: 0, to: now }, lifetime: true, metrics: ['gpu_utilization'] });
    expect(lifetime).to.deep.equal({ gpu_utilization: { avg: 50, min: 40, max: 60, current: 55 } });
  });

  it('keeps a bucket the database refused and writes it at the next run, once', async () => {
    sample(T0 + 1_000, 10);
    clock.set(T0 + MINUTE + GRACE);
    const write = sinon.stub(store, 'writeBucket').rejects(new Error('Connection terminated unexpectedly'));
    let error: unknown;
    await flusher.flush().catch((e: unknown) => (error = e));
    expect((error as Error).message).to.equal('Connection terminated unexpectedly');
    expect(flusher.stats().queuedBuckets).to.equal(1);
    write.restore();
    expect(await flusher.flush()).to.equal(1);
    expect(await flusher.flush()).to.equal(0);
    expect((await store.lifetime('job'))?.gpu_utilization?.count).to.equal(1);
  });

  it('drops the oldest buckets beyond its queue while the database refuses them, and says so', async () => {
    sinon.stub(store, 'writeBucket').rejects(new Error('the database system is starting up'));
    for (let m = 0; m < 5; m += 1) {
      sample(T0 + m * MINUTE, 10);
      clock.set(T0 + (m + 1) * MINUTE + GRACE);
      await flusher.flush().catch(() => undefined);
    }
    expect(flusher.stats()).to.deep.include({ queuedBuckets: 3, droppedRows: 2 });
    expect(warnings).to.deep.equal([
      'GPU telemetry buckets dropped: the database has refused them for too long',
      'GPU telemetry buckets dropped: the database has refused them for too long',
    ]);
  });

  it('writes everything at shutdown, the bucket still open included', async () => {
    sample(T0 + 5_000, 30);
    clock.set(T0 + 10_000);
    expect(await flusher.flush()).to.equal(0);
    expect(await flusher.flush({ all: true })).to.equal(1);
    expect((await store.lifetime('job'))?.gpu_utilization).to.deep.include({ count: 1, sum: 30 });
  });

  it('answers a window in the whole buckets that start inside it', async () => {
    sample(T0 + 30_000, 10);
    sample(T0 + MINUTE + 30_000, 20);
    clock.set(T0 + 2 * MINUTE + GRACE);
    await flusher.flush();
    const from = T0 + 30_000; // inside the first bucket: only the second starts in the window
    const summary = await reader().summarize({ workload, window: { from, to: T0 + 2 * MINUTE }, lifetime: false, metrics: ['gpu_utilization'] });
    expect(summary.gpu_utilization).to.deep.equal({ avg: 20, min: 20, max: 20, current: 20 });
  });
});
