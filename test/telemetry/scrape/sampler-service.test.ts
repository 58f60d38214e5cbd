// The whole telemetry path on loopback: exporter pods found through the simulated cluster's pod
// informer, simulated dcgm-exporters scraped at their pod IPs, samples attributed to the Job's pods,
// and the answers of /v1/workloads/{id}/metrics and /v1/workloads/metrics.
import { expect } from 'chai';
import { SimDcgmFleet } from '../../../sim/dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../../../sim/dcgm-exporter/exporter.js';
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import { parseMetrics, sumOf } from '../../../bench/lib/service/metrics-text.js';
import { TEST_BACKEND, testIndexLocation, type TestIndexLocation } from '../../support/backend.js';
import { startTestService, type TestService } from '../../support/service-harness.js';
import { FAST_INFORMERS, dcgmValues, aGpuJob, aGpuNode, aGpuPod, aNamespace, anExporterPod, running, startSimCluster, uidOf, type SimCluster } from '../../support/sim-cluster.js';
import { makeTempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait-for.js';

const values = dcgmValues;

describe('telemetry: simulated exporters → sampler → /v1 metrics', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let fleet: SimDcgmFleet;
  let t: TestService | undefined;
  let job: KubeObject;
  let solo: KubeObject;
  let healthy: SimExporterHandle;
  let broken: SimExporterHandle;
  // Kept across the restart below.
  let index: TestIndexLocation;

  const env = () => ({
    GPUCAP_HOME_CLUSTER_ENABLED: 'true',
    GPUCAP_KUBECONFIG: sim.kubeconfigPath,
    GPUCAP_CLUSTER_ID: 'gpu-east',
    GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
    GPUCAP_EXPORTER_PORT: String(fleet.port),
    GPUCAP_SCRAPE_INTERVAL_SECONDS: '2',
    GPUCAP_SCRAPE_TIMEOUT_SECONDS: '1',
    GPUCAP_SCRAPE_MAX_BYTES: String(1 << 20),
  });

  before(async () => {
    temp = makeTempDir();
    index = await testIndexLocation(temp.path);
    sim = await startSimCluster(temp.path, 'gpu-east');
    fleet = await SimDcgmFleet.start();
    const store = sim.api.store;
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('namespaces', aNamespace('gpu-operator'));
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    store.create('nodes', aGpuNode('h100-2', 'p5.48xlarge'));
    const started = Date.now() - 600_000;
    job = store.create('jobs', aGpuJob('llm', 'train', 2));
    store.patchStatus('jobs', job.metadata, { startTime: new Date(started).toISOString(), active: 1 });
    const pod = store.create('pods', aGpuPod('llm', 'train-0', { gpus: 2, node: 'h100-1', job }));
    store.patchStatus('pods', pod.metadata, running(started));
    solo = store.create('pods', aGpuPod('llm', 'solo', { gpus: 1, node: 'h100-2' }));
    store.patchStatus('pods', solo.metadata, running(started));

    healthy = await fleet.add({
      hostname: 'h100-1',
      gpus: [
        { index: 0, uuid: 'GPU-a', pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: values(40, 50, 300.5) },
        { index: 1, uuid: 'GPU-b', pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: values(60, 70, 400.25) },
        { index: 2, uuid: 'GPU-c', values: values(99, 30, 60) }, // idle, no pod: kept, not attributed
      ],
    });
    broken = await fleet.add({ hostname: 'h100-2', gpus: [{ index: 0, uuid: 'GPU-d', pod: { pod: 'solo', namespace: 'llm' }, values: values(10, 40, 100) }] });
    store.create('pods', anExporterPod('h100-1', healthy.ip));
    store.create('pods', anExporterPod('h100-2', broken.ip));
    t = await startTestService({ clock: 'system', informers: FAST_INFORMERS, env: env(), index });
    // What every test below starts from: both pods indexed (a round trip each on PostgreSQL) and both
    // exporters scraped at least once.
    for (const workload of [job, solo]) {
      await waitFor(async () => (await metricsOf(uidOf(workload), '?metrics=gpu_utilization'))?.data?.metrics?.gpu_utilization?.avg ?? undefined, {
        what: `the last hour of ${workload.metadata.name ?? 'a workload'}`,
        timeoutMs: 15_000,
      });
    }
  });

  after(async () => {
    await t?.stop();
    await fleet?.close();
    await sim?.close();
    await index?.remove();
    temp?.remove();
  });

  const service = (): TestService => {
    if (t === undefined) throw new Error('service not started');
    return t;
  };
  const metricsOf = async (id: string, query = '') => (await service().get(`/v1/workloads/${id}/metrics${query}`)).body;
  const scrapeSeries = async () => parseMetrics(await (await fetch(`${service().adminUrl}/metrics`)).text());

  it('answers the job\'s metrics over its two GPUs with the exporter\'s values', async () => {
    const body = await waitFor(async () => {
      const found = await metricsOf(uidOf(job));
      return found?.data?.metrics?.gpu_utilization?.avg === null || found?.data === undefined ? undefined : found;
    }, { what: 'the job\'s metrics', timeoutMs: 15_000 });
    expect(body.data).to.deep.equal({
      workload_id: uidOf(job),
      time_range: 'last_1h',
      metrics: {
        gpu_utilization: { avg: 50, min: 40, max: 60, current: 50 },
        memory_utilization: { avg: 25, min: 25, max: 25, current: 25 },
        temperature: { avg: 60, min: 50, max: 70, current: 60 },
        power_usage: { avg: 350.4, min: 300.5, max: 400.3, current: 350.4 },
        gpu_usage: { avg: 25, min: 20, max: 30, current: 25 },
      },
    });
    const sixHours = await metricsOf(uidOf(job), '?time_range=last_24h&metrics=gpu_utilization,temperature');
    expect(sixHours.data.metrics).to.deep.equal({
      gpu_utilization: { avg: 50, min: 40, max: 60, current: 50 },
      temperature: { avg: 60, min: 50, max: 70, current: 60 },
    });
  });

  it('ranks the workloads by their last hour and leaves the unattributed GPU out', async () => {
    const ranking = (await service().get('/v1/workloads/metrics?sort_by=gpu_utilization')).body;
    expect(ranking.data.workloads).to.deep.equal([
      { workload_id: uidOf(job), name: 'train', initiative_id: 'llm', gpu_utilization: { avg: 50, current: 50 } },
      { workload_id: uidOf(solo), name: 'solo', initiative_id: 'llm', gpu_utilization: { avg: 10, current: 10 } },
    ]);
    expect(ranking.data.scope_average).to.deep.equal({ gpu_utilization: 30 });
    expect(ranking.metadata.total_count).to.equal(2);
    const ascending = (await service().get('/v1/workloads/metrics?sort_by=power_usage&order=asc&limit=1')).body;
    expect(ascending.data.workloads).to.deep.equal([{ workload_id: uidOf(solo), name: 'solo', initiative_id: 'llm', power_usage: { avg: 100, current: 100 } }]);
    expect(ascending.metadata.total_count).to.equal(2);
  });

  it('ranks only what the caller may see and what the filters keep', async () => {
    const t = service();
    const asMember = (await t.get('/v1/workloads/metrics', { as: t.callers.member })).body; // member of "vision" only
    expect(asMember.data).to.deep.equal({ workloads: [], scope_average: { gpu_utilization: null } });
    expect(asMember.metadata.total_count).to.equal(0);
    const asLead = (await t.get('/v1/workloads/metrics?initiative_id=llm', { as: t.callers.lead })).body;
    expect(asLead.metadata.total_count).to.equal(2);
    const completed = (await t.get('/v1/workloads/metrics?status=completed')).body;
    expect(completed.data.workloads).to.deep.equal([]);
    const otherOrg = (await t.get('/v1/workloads/metrics', { as: t.callers.otherOrgAdmin })).body;
    expect(otherOrg.metadata.total_count).to.equal(0);
    const hidden = await t.get(`/v1/workloads/${uidOf(job)}/metrics`, { as: t.callers.member });
    expect(hidden.status).to.equal(404);
  });

  it('a hanging exporter times out on its own while the other keeps being scraped', async () => {
    broken.fault({ kind: 'hang' });
    const before = healthy.requests;
    await waitFor(async () => (healthy.requests >= before + 3 ? true : undefined), { what: 'three more scrapes of the healthy exporter', timeoutMs: 15_000 });
    const readyz = (await (await fetch(`${service().adminUrl}/readyz`)).json()) as {
      degraded: boolean;
      components: { telemetry: { exporters: { node: string; lastError: { reason: string } | null; consecutiveFailures: number }[] } };
    };
    const byNode = new Map(readyz.components.telemetry.exporters.map((e) => [e.node, e]));
    expect(byNode.get('h100-1')).to.include({ consecutiveFailures: 0 });
    expect(byNode.get('h100-2')?.lastError?.reason).to.equal('timeout');
    expect(readyz.degraded, 'one exporter of two failing does not degrade the service').to.equal(false);
    expect(sumOf(await scrapeSeries(), 'gpucap_scrape_failures_total', { reason: 'timeout' })).to.be.at.least(1);
    broken.fault(null);
  });

  const faults = [
    [{ kind: 'status', status: 500 }, 'http_status'],
    [{ kind: 'garbage' }, 'parse'],
    [{ kind: 'truncated' }, 'parse'],
    [{ kind: 'reset' }, 'connection'],
    [{ kind: 'huge', bytes: 4 << 20 }, 'too_large'],
  ] as const;
  for (const [index, [fault, reason]] of faults.entries()) {
    it(`counts an exporter answering with a ${fault.kind} fault as a ${reason} failure, and recovers`, async () => {
      const failures = async () => sumOf(await scrapeSeries(), 'gpucap_scrape_failures_total', { reason });
      const start = await failures();
      broken.fault(fault);
      await waitFor(async () => ((await failures()) > start ? true : undefined), { what: `a ${reason} failure`, timeoutMs: 10_000 });
      // A value no earlier scrape returned, set while the exporter still fails: only a successful
      // scrape after the fault can bring it to the API.
      const recovered = 21 + index;
      broken.setValues('GPU-d', values(recovered, 40, 100));
      broken.fault(null);
      await waitFor(async () => {
        const found = await metricsOf(uidOf(solo));
        return found?.data?.metrics?.gpu_utilization?.current === recovered ? true : undefined;
      }, { what: `the solo pod's current utilization to become ${recovered} after recovery`, timeoutMs: 10_000 });
    });
  }

  it('marks the exporters check degraded on /v1/health while no exporter answers, staying healthy, and ok again once one does', async () => {
    const exporters = async () => {
      const data = (await service().get('/v1/health')).body?.data;
      expect(data?.status).to.equal('healthy'); // the index still answers
      return data?.checks?.find((c: { name: string }) => c.name === 'exporters')?.status;
    };
    healthy.fault({ kind: 'status', status: 503 });
    broken.fault({ kind: 'status', status: 503 });
    await waitFor(async () => ((await exporters()) === 'degraded' ? true : undefined), { what: 'exporters check degraded', timeoutMs: 10_000 });
    healthy.fault(null);
    broken.fault(null);
    await waitFor(async () => ((await exporters()) === 'ok' ? true : undefined), { what: 'exporters check ok', timeoutMs: 10_000 });
  });

  // Rings are the process's own and start empty; shared summaries are the database's and outlive it.
  it('keeps job_lifetime across a restart, and the last hour where it is shared (PostgreSQL)', async () => {
    const lifetime = await metricsOf(uidOf(job), '?time_range=job_lifetime&metrics=gpu_utilization,power_usage');
    expect(lifetime.data.metrics.gpu_utilization).to.deep.include({ avg: 50, min: 40, max: 60 });
    await service().stop();
    t = undefined;
    await fleet.close(); // no exporter after the restart: every number below comes from the index
    t = await startTestService({ clock: 'system', informers: FAST_INFORMERS, env: env(), index });
    const after = await waitFor(async () => {
      const found = await metricsOf(uidOf(job), '?time_range=job_lifetime&metrics=gpu_utilization,power_usage');
      return found?.data === undefined ? undefined : found;
    }, { what: 'the job after the restart', timeoutMs: 10_000 });
    expect(after.data.metrics).to.deep.equal({
      gpu_utilization: { avg: 50, min: 40, max: 60, current: 50 },
      power_usage: { avg: 350.4, min: 300.5, max: 400.3, current: 350.4 },
    });
    const lastHour = await metricsOf(uidOf(job), '?metrics=gpu_utilization');
    expect(lastHour.data.metrics.gpu_utilization).to.deep.equal(
      TEST_BACKEND === 'postgres' ? { avg: 50, min: 40, max: 60, current: 50 } : { avg: null, min: null, max: null, current: null },
    );
  });
});
