// GPU telemetry shared through PostgreSQL (schema v2): buckets stored once per workload, lifetime
// totals that a retried or doubled flush leaves alone, window folds, last-hour figures and pruning, on
// a real server.
import { expect } from 'chai';
import pg from 'pg';
import { emptyUsage } from '../../../src/domain/gpu-usage.js';
import type { GpuBucketRow } from '../../../src/domain/telemetry.js';
import { PostgresGpuSummaries } from '../../../src/store/postgres/gpu-summaries.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);

/** A bucket row with `samples` samples per metric of `value` on `gpus` GPUs (every metric the same). */
function row(workloadId: string, value: number, options: { cluster?: string; samples?: number; gpus?: number; missing?: number[] } = {}): GpuBucketRow {
  const samples = options.samples ?? 4;
  const gpus = options.gpus ?? 1;
  const slots = [0, 1, 2, 3, 4];
  const has = (slot: number) => !(options.missing ?? []).includes(slot);
  return {
    workloadId,
    clusterId: options.cluster ?? 'west',
    count: slots.map((s) => (has(s) ? samples : 0)),
    sum: slots.map((s) => (has(s) ? samples * value : 0)),
    min: slots.map((s) => (has(s) ? value - 1 : null)),
    max: slots.map((s) => (has(s) ? value + 1 : null)),
    latestSum: slots.map((s) => (has(s) ? gpus * value : 0)),
    latestCount: slots.map((s) => (has(s) ? gpus : 0)),
    current: slots.map((s) => (has(s) ? value : null)),
    usage: emptyUsage(),
  };
}

describe('store/postgres GPU summaries shared by the replicas', function () {
  this.timeout(30_000);
  let db: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresGpuSummaries;

  beforeEach(async function () {
    db = await freshDatabase(this);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    store = new PostgresGpuSummaries({ primary: pool, readers: pool });
  });

  afterEach(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('stores a bucket once: a retry and a second writer add nothing to the buckets or the lifetime totals', async () => {
    expect(await store.writeBucket(T0, [row('job-a', 50), row('job-b', 10)])).to.equal(2);
    expect(await store.writeBucket(T0, [row('job-a', 90), row('job-b', 90)])).to.equal(0);
    expect(await store.writeBucket(T0 + MINUTE, [row('job-a', 70)])).to.equal(1);
    const lifetime = await store.lifetime('job-a');
    expect(lifetime?.gpu_utilization).to.deep.equal({ count: 8, sum: 4 * 50 + 4 * 70, min: 49, max: 71, current: 70 });
    expect((await store.lifetime('job-b'))?.power_usage).to.deep.equal({ count: 4, sum: 40, min: 9, max: 11, current: 10 });
    expect(await store.lifetime('job-c')).to.equal(undefined);
  });

  it('never adds a bucket older than the lifetime totals already hold', async () => {
    await store.writeBucket(T0 + MINUTE, [row('job-a', 70)]);
    expect(await store.writeBucket(T0, [row('job-a', 10)])).to.equal(1);
    expect((await store.lifetime('job-a'))?.gpu_utilization).to.deep.equal({ count: 4, sum: 280, min: 69, max: 71, current: 70 });
  });

  it('keeps a metric without samples out of the lifetime totals, and keeps the last known current', async () => {
    await store.writeBucket(T0, [row('job-a', 40)]);
    await store.writeBucket(T0 + MINUTE, [row('job-a', 60, { missing: [2] })]);
    const lifetime = await store.lifetime('job-a');
    expect(lifetime?.temperature).to.deep.equal({ count: 4, sum: 160, min: 39, max: 41, current: 40 });
    expect(lifetime?.gpu_utilization?.count).to.equal(8);
  });

  it('folds the buckets that start inside a window, the newest giving the latest figures', async () => {
    await store.writeBucket(T0, [row('job-a', 10)]);
    await store.writeBucket(T0 + MINUTE, [row('job-a', 20, { gpus: 2 })]);
    await store.writeBucket(T0 + 2 * MINUTE, [row('job-a', 30, { missing: [2] })]);
    const all = await store.window('job-a', { from: T0, to: T0 + 3 * MINUTE });
    expect(all?.count[0]).to.equal(12);
    expect(all?.sum[0]).to.equal(240);
    expect([all?.min[0], all?.max[0]]).to.deep.equal([9, 31]);
    expect([all?.latestSum[0], all?.latestCount[0]]).to.deep.equal([30, 1]);
    expect([all?.count[2], all?.min[2], all?.latestCount[2]]).to.deep.equal([8, 9, 0]);
    const firstTwo = await store.window('job-a', { from: T0, to: T0 + 2 * MINUTE });
    expect([firstTwo?.sum[0], firstTwo?.latestSum[0], firstTwo?.latestCount[0]]).to.deep.equal([120, 40, 2]);
    expect(await store.window('job-a', { from: T0 + 3 * MINUTE, to: T0 + 9 * MINUTE })).to.equal(null);
    expect(await store.window('job-z', { from: T0, to: T0 + 3 * MINUTE })).to.equal(null);
  });

  it('reads a window\'s buckets one by one, and every bucket of a workload with its lifetime counts (percentiles)', async () => {
    await store.writeBucket(T0, [row('job-a', 10), row('job-b', 70)]);
    await store.writeBucket(T0 + MINUTE, [row('job-a', 20, { samples: 2, missing: [2] })]);
    const figures = (list: Awaited<ReturnType<typeof store.buckets>>) =>
      list.map((b) => [b.count[0], b.sum[0], b.min[0], b.max[0], b.count[2], b.min[2]]).sort((a, b) => Number(a[1]) - Number(b[1]));
    expect(figures(await store.buckets('job-a', { from: T0, to: T0 + 2 * MINUTE }))).to.deep.equal([[4, 40, 9, 11, 4, 9], [2, 40, 19, 21, 0, null]]);
    expect(figures(await store.buckets('job-a', { from: T0 + MINUTE, to: T0 + 2 * MINUTE }))).to.deep.equal([[2, 40, 19, 21, 0, null]]);
    expect(await store.buckets('job-a', { from: T0 + 2 * MINUTE, to: T0 + 9 * MINUTE })).to.deep.equal([]);
    const lifetime = await store.lifetimeBuckets('job-a');
    expect(lifetime.buckets).to.have.length(2);
    expect(lifetime.counts).to.deep.equal({ gpu_utilization: 6, memory_utilization: 6, temperature: 4, power_usage: 6, gpu_usage: 6 });
    // Once the oldest bucket is pruned, the buckets no longer add up to the lifetime counts.
    await store.pruneBuckets('west', T0 + MINUTE);
    const pruned = await store.lifetimeBuckets('job-a');
    expect([pruned.buckets.length, pruned.counts.gpu_utilization]).to.deep.equal([1, 6]);
    expect(await store.lifetimeBuckets('job-z')).to.deep.equal({ buckets: [], counts: {} });
  });

  it('ranks from the last hour of each cluster\'s buckets, refreshed by the cluster\'s writer, and drops what went quiet', async () => {
    await store.writeBucket(T0 - 90 * MINUTE, [row('job-old', 99)]);
    await store.writeBucket(T0 - 30 * MINUTE, [row('job-a', 20), row('job-east', 5, { cluster: 'east' })]);
    await store.writeBucket(T0 - MINUTE, [row('job-a', 40, { gpus: 2 })]);
    expect(await store.lastHour(0, T0)).to.deep.equal(new Map());
    await store.refreshLastHour('west', T0);
    expect(await store.lastHour(0, T0)).to.deep.equal(new Map([['job-a', { sum: 240, count: 8, latestSum: 80, latestCount: 2 }]]));
    await store.refreshLastHour('east', T0);
    expect([...(await store.lastHour(4, T0)).keys()].sort()).to.deep.equal(['job-a', 'job-east']);
    // An hour later with nothing new: the rows have no bucket in the hour asked for.
    expect(await store.lastHour(0, T0 + 61 * MINUTE)).to.deep.equal(new Map());
    await store.refreshLastHour('west', T0 + 61 * MINUTE);
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM workload_gpu_last_hour WHERE cluster_id = 'west'");
    expect(rows[0].n).to.equal(0);
  });

  it('prunes one cluster\'s buckets older than the cutoff, leaving the lifetime totals and other clusters', async () => {
    await store.writeBucket(T0, [row('job-a', 10), row('job-east', 10, { cluster: 'east' })]);
    await store.writeBucket(T0 + MINUTE, [row('job-a', 10)]);
    expect(await store.pruneBuckets('west', T0 + MINUTE)).to.equal(1);
    const { rows } = await pool.query('SELECT workload_id, bucket_at FROM workload_gpu_buckets ORDER BY workload_id, bucket_at');
    expect(rows.map((r) => [r.workload_id, Number(r.bucket_at)])).to.deep.equal([['job-a', T0 + MINUTE], ['job-east', T0]]);
    expect((await store.lifetime('job-a'))?.gpu_utilization?.count).to.equal(8);
  });
});
