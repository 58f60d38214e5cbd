// GET /v1/workloads/{id}/metrics?percentiles=… through the real service: a simulated cluster whose Job
// holds 20 GPUs of one simulated dcgm-exporter, each GPU held at its own set values, scraped by the
// real sampler on a fixed clock. Every scrape reads all 20 GPUs at once, so each GPU has as many
// samples as the others and the nearest-rank percentile is the same whatever the number of scrapes:
// p50 is the 10th of the 20 values, p95 the 19th, p99 the 20th. On SQLite the rings answer, exactly
// at every range (a GPU's buckets hold one value each). On PostgreSQL the stored buckets answer: one
// bucket per workload holds every GPU, so each percentile is that bucket's mean (the documented
// bound: within the bucket's max − min of the exact value).
import { expect } from 'chai';
import { SimDcgmFleet } from '../../sim/dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../../sim/dcgm-exporter/exporter.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { workloadMetricsEndpoint } from '../../src/api/routes/metrics.js';
import { TEST_BACKEND, testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { expectShape } from '../support/shape.js';
import { FAST_INFORMERS, aGpuJob, aGpuNode, aGpuPod, aNamespace, anExporterPod, dcgmValues, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const GPUS = 20;
// Set out of order, so that a percentile is not simply the GPU of that index.
// Their sum is even, so no mean below falls half-way between two stored units (a rounding tie).
const UTILIZATION = [44, 3, 98, 18, 63, 25, 88, 7, 51, 36, 72, 12, 94, 31, 67, 22, 83, 40, 58, 78];
const temperature = (i: number) => 30 + 2 * i;
const power = (i: number) => 100.24 + 17.6 * i; // kept to 0.1 W: 100.2, 117.8, …

/** The nearest-rank percentile of `values` by sorting: the value at rank ⌈p × n / 100⌉. */
function nearest(values: readonly number[], percentile: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((percentile * sorted.length) / 100) - 1] as number;
}

const round2 = (v: number) => Math.round(v * 100) / 100;
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Each metric's values over the 20 GPUs, as stored (0.01 of the unit, power 0.1 W). */
const VALUES: Record<string, number[]> = {
  gpu_utilization: UTILIZATION,
  memory_utilization: UTILIZATION.map(() => 25), // FB used 20000 of 80000
  temperature: UTILIZATION.map((_, i) => temperature(i)),
  power_usage: UTILIZATION.map((_, i) => Math.round(power(i) * 10) / 10),
  gpu_usage: UTILIZATION.map((u) => u / 2), // DCGM_FI_PROF_GR_ENGINE_ACTIVE = util / 200
};
const STORED_UNIT: Record<string, number> = { gpu_utilization: 0.01, memory_utilization: 0.01, temperature: 0.01, power_usage: 0.1, gpu_usage: 0.01 };

/** What the service answers for one metric with `percentiles=50,95,99`, on the test backend. */
function expected(metric: string): Record<string, number> {
  const values = VALUES[metric] ?? [];
  const figures = { avg: round2(mean(values)), min: Math.min(...values), max: Math.max(...values), current: round2(mean(values)) };
  if (TEST_BACKEND === 'postgres') {
    // One stored bucket holds every GPU: its mean, to the stored unit, stands for each of its samples.
    const unit = STORED_UNIT[metric] ?? 0.01;
    const bucketMean = round2(Math.round(mean(values) / unit) * unit);
    return { ...figures, p50: bucketMean, p95: bucketMean, p99: bucketMean };
  }
  return { ...figures, p50: nearest(values, 50), p95: nearest(values, 95), p99: nearest(values, 99) };
}

describe('GPU metrics percentiles (real service, simulated exporter)', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let fleet: SimDcgmFleet;
  let exporter: SimExporterHandle;
  let index: TestIndexLocation;
  let t: TestService | undefined;
  let jobId: string;
  let idleId: string;
  // Half a second into a second: the fixed clock's samples sit well inside one stored bucket.
  const start = Math.floor(Date.now() / 1000) * 1000 + 500;

  const env = () => ({
    GPUCAP_HOME_CLUSTER_ENABLED: 'true',
    GPUCAP_KUBECONFIG: sim.kubeconfigPath,
    GPUCAP_CLUSTER_ID: 'gpu-east',
    GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
    GPUCAP_EXPORTER_PORT: String(fleet.port),
    GPUCAP_SCRAPE_INTERVAL_SECONDS: '2',
    GPUCAP_SCRAPE_TIMEOUT_SECONDS: '1',
  });
  const service = (): TestService => {
    if (t === undefined) throw new Error('service not started');
    return t;
  };
  const metricsOf = async (id: string, query = ''): Promise<{ status: number; body: JsonBody; text: string }> => {
    const res = await service().get(`/v1/workloads/${id}/metrics${query}`);
    return { status: res.status, body: res.body, text: JSON.stringify(res.body?.data) };
  };

  before(async () => {
    temp = makeTempDir();
    index = await testIndexLocation(temp.path);
    sim = await startSimCluster(temp.path, 'gpu-east');
    fleet = await SimDcgmFleet.start();
    const store = sim.api.store;
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('namespaces', aNamespace('gpu-operator'));
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    const started = start - 600_000;
    const job: KubeObject = store.create('jobs', aGpuJob('llm', 'train', GPUS));
    store.patchStatus('jobs', job.metadata, { startTime: new Date(started).toISOString(), active: 1 });
    const pod = store.create('pods', aGpuPod('llm', 'train-0', { gpus: GPUS, node: 'h100-1', job }));
    store.patchStatus('pods', pod.metadata, running(started));
    // A GPU pod no exporter reports: every figure of it is null.
    const idle = store.create('pods', aGpuPod('llm', 'idle', { gpus: 1, node: 'h100-1' }));
    store.patchStatus('pods', idle.metadata, running(started));
    jobId = job.metadata.uid ?? '';
    idleId = idle.metadata.uid ?? '';
    exporter = await fleet.add({
      hostname: 'h100-1',
      gpus: UTILIZATION.map((util, i) => ({
        index: i, uuid: `GPU-${i}`, pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: dcgmValues(util, temperature(i), power(i)),
      })),
    });
    store.create('pods', anExporterPod('h100-1', exporter.ip));
    t = await startTestService({ now: new Date(start).toISOString(), informers: FAST_INFORMERS, env: env(), index });
    // Two scrapes at the fixed time once the pods are known (the idle pod is indexed from the same pod
    // list the telemetry attributes GPUs with), then the clock moves on 3 s: on PostgreSQL the bucket
    // of those scrapes has ended (and its grace, the scrape timeout + 1 s, passed) and is stored.
    await waitFor(async () => ((await service().get(`/v1/workloads/${idleId}`)).status === 200 ? true : undefined), { what: 'the pods indexed', timeoutMs: 15_000 });
    const scraped = exporter.requests;
    await waitFor(async () => (exporter.requests >= scraped + 2 ? true : undefined), { what: 'two more scrapes', timeoutMs: 15_000 });
    service().clock.advance(3_000);
    const avg = expected('gpu_utilization').avg;
    await waitFor(async () => ((await metricsOf(jobId, '?metrics=gpu_utilization')).body?.data?.metrics?.gpu_utilization?.avg === avg ? true : undefined), {
      what: 'the job\'s samples',
      timeoutMs: 15_000,
    });
  });

  after(async () => {
    await t?.stop();
    await fleet?.close();
    await sim?.close();
    await index?.remove();
    temp?.remove();
  });

  it('last_1h: p50, p95 and p99 of every metric over the 20 GPUs\' samples', async () => {
    const res = await metricsOf(jobId, '?percentiles=50,95,99');
    expect(res.status).to.equal(200);
    expectShape(res.body, workloadMetricsEndpoint.response);
    expect(res.body.data.time_range).to.equal('last_1h');
    for (const metric of Object.keys(VALUES)) expect(res.body.data.metrics[metric], metric).to.deep.equal(expected(metric));
    if (TEST_BACKEND === 'sqlite') {
      // Spelled out: the 10th, 19th and 20th of 3, 7, 12, … 94, 98.
      expect(res.body.data.metrics.gpu_utilization).to.deep.include({ p50: 44, p95: 94, p99: 98 });
      expect(res.body.data.metrics.power_usage).to.deep.include({ p50: 258.6, p95: 417, p99: 434.6 });
    }
  });

  it('every range gives the same percentiles when each GPU held one value, job_lifetime included', async () => {
    for (const range of ['last_6h', 'last_24h', 'job_lifetime']) {
      const res = await metricsOf(jobId, `?time_range=${range}&metrics=gpu_utilization,power_usage&percentiles=50,75,90,95,99`);
      expect(res.status, range).to.equal(200);
      for (const metric of ['gpu_utilization', 'power_usage']) {
        const values = VALUES[metric] ?? [];
        const want = expected(metric);
        const percentiles =
          TEST_BACKEND === 'postgres'
            ? { p50: want.p50, p75: want.p50, p90: want.p50, p95: want.p50, p99: want.p50 }
            : { p50: nearest(values, 50), p75: nearest(values, 75), p90: nearest(values, 90), p95: nearest(values, 95), p99: nearest(values, 99) };
        expect(res.body.data.metrics[metric], `${range} ${metric}`).to.deep.include(percentiles);
        // Keys in a fixed order: the contract's four, then the percentiles ascending.
        expect(Object.keys(res.body.data.metrics[metric]), range).to.deep.equal(['avg', 'min', 'max', 'current', 'p50', 'p75', 'p90', 'p95', 'p99']);
      }
    }
  });

  it('without the parameter the answer is exactly today\'s; with it, the same plus the pNN fields', async () => {
    for (const range of ['last_1h', 'last_24h', 'job_lifetime']) {
      const plain = await metricsOf(jobId, `?time_range=${range}`);
      for (const summary of Object.values(plain.body.data.metrics)) expect(Object.keys(summary as object)).to.deep.equal(['avg', 'min', 'max', 'current']);
      const withPercentiles = await metricsOf(jobId, `?time_range=${range}&percentiles=99`);
      const stripped = structuredClone(withPercentiles.body.data);
      for (const summary of Object.values(stripped.metrics)) delete (summary as Record<string, unknown>).p99;
      expect(JSON.stringify(stripped), range).to.equal(plain.text);
    }
  });

  it('a metric without samples has its percentiles null too', async () => {
    const res = await metricsOf(idleId, '?metrics=gpu_utilization&percentiles=50,95,99');
    expect(res.status).to.equal(200);
    expect(res.body.data.metrics).to.deep.equal({ gpu_utilization: { avg: null, min: null, max: null, current: null, p50: null, p95: null, p99: null } });
    const lifetime = await metricsOf(idleId, '?time_range=job_lifetime&metrics=temperature&percentiles=75');
    expect(lifetime.body.data.metrics).to.deep.equal({ temperature: { avg: null, min: null, max: null, current: null, p75: null } });
  });

  it('refuses a list that is not ascending, repeats a value, names another percentile or has a space', async () => {
    const message = 'must be a comma-separated list of 50, 75, 90, 95, 99 in ascending order, each at most once';
    for (const value of ['99,50', '95,95', '42', '50,', '', '50, 95', 'p50', '50;95']) {
      const res = await metricsOf(jobId, `?percentiles=${encodeURIComponent(value)}`);
      expect(res.status, value).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details, value).to.deep.equal([{ location: 'query', field: 'percentiles', message: `${message}, got "${value}"` }]);
      expect(res.body.error.message, value).to.equal(`Invalid query parameter "percentiles": ${message}, got "${value}"`);
    }
    const twice = await metricsOf(jobId, '?percentiles=50&percentiles=95');
    expect(twice.status).to.equal(400);
    expect(twice.body.error.details).to.deep.equal([{ location: 'query', field: 'percentiles', message: 'must be given once' }]);
  });

  // Rings are the process's own and start empty; the stored buckets outlive it.
  it('after a restart, job_lifetime keeps avg/min/max and has percentiles only where the samples are shared (PostgreSQL)', async () => {
    await service().stop();
    t = undefined;
    await fleet.close(); // no exporter after the restart: every number below comes from the index
    t = await startTestService({ now: new Date(start + 3_000).toISOString(), informers: FAST_INFORMERS, env: env(), index });
    const after = await waitFor(async () => {
      const found = await metricsOf(jobId, '?time_range=job_lifetime&metrics=gpu_utilization&percentiles=50,99');
      return found.body?.data === undefined ? undefined : found;
    }, { what: 'the job after the restart', timeoutMs: 10_000 });
    const { avg, min, max, p50, p99 } = expected('gpu_utilization');
    expect(after.body.data.metrics.gpu_utilization).to.deep.include(TEST_BACKEND === 'postgres' ? { avg, min, max, p50, p99 } : { avg, min, max, p50: null, p99: null });
  });
});
