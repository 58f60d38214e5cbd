// GPU metrics and rankings on every replica (issue 16 item 3), on real processes: three replicas on
// one PostgreSQL follow one simulated cluster with simulated dcgm-exporters. Only the cluster's writer
// scrapes; every replica answers /v1/workloads/{id}/metrics and the rankings from the buckets it
// stored, so all three give the same bytes; and after the writer is killed the survivors still do.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { SimDcgmFleet } from '../../sim/dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../../sim/dcgm-exporter/exporter.js';
import { aGpuJob, aGpuNode, aGpuPod, aNamespace, anExporterPod, dcgmValues, running } from '../support/sim-cluster.js';
import { answerDifferences, apiGet, currentWriter, startHaRig, waitReady, withoutRequestId, type HaRig, type Replica } from '../support/replica-process.js';
import { waitFor } from '../support/wait-for.js';

const values = dcgmValues;

describe('ha: GPU metrics and rankings, the same on every replica (shared telemetry)', function () {
  this.timeout(180_000);
  let rig: HaRig | undefined;
  let fleet: SimDcgmFleet | undefined;
  let exporters: SimExporterHandle[] = [];
  const ids: string[] = [];

  before(async function () {
    fleet = await SimDcgmFleet.start();
    rig = await startHaRig(this, {
      prepare: (sim) => {
        const store = sim.api.store;
        store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
        store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
        store.create('nodes', aGpuNode('h100-2', 'p5.48xlarge'));
        const started = Date.now() - 600_000;
        const job = store.create('jobs', aGpuJob('llm', 'train', 2));
        store.patchStatus('jobs', job.metadata, { startTime: new Date(started).toISOString(), active: 1 });
        const pod = store.create('pods', aGpuPod('llm', 'train-0', { gpus: 2, node: 'h100-1', job }));
        store.patchStatus('pods', pod.metadata, running(started));
        const solo = store.create('pods', aGpuPod('llm', 'solo', { gpus: 1, node: 'h100-2' }));
        store.patchStatus('pods', solo.metadata, running(started));
        ids.push(job.metadata.uid ?? '', solo.metadata.uid ?? '');
      },
    });
    exporters = [
      await fleet.add({
        hostname: 'h100-1',
        gpus: [
          { index: 0, uuid: 'GPU-a', pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: values(40, 50, 300.5) },
          { index: 1, uuid: 'GPU-b', pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: values(60, 70, 400.25) },
        ],
      }),
      await fleet.add({ hostname: 'h100-2', gpus: [{ index: 0, uuid: 'GPU-d', pod: { pod: 'solo', namespace: 'llm' }, values: values(10, 40, 100) }] }),
    ];
    exporters.forEach((exporter, i) => rig?.sim.api.store.create('pods', anExporterPod(`h100-${i + 1}`, exporter.ip)));
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && rig !== undefined) console.log(rig.logTails());
  });

  after(async () => {
    await rig?.close();
    await fleet?.close();
  });

  const paths = (): string[] => [
    ...ids.flatMap((id) => ['last_1h', 'last_6h', 'last_24h', 'job_lifetime'].map((range) => `/v1/workloads/${id}/metrics?time_range=${range}`)),
    ...ids.flatMap((id) => ['last_1h', 'job_lifetime'].map((range) => `/v1/workloads/${id}/metrics?time_range=${range}&percentiles=50,95,99`)),
    ...['gpu_utilization', 'memory_utilization', 'power_usage'].map((metric) => `/v1/workloads/metrics?sort_by=${metric}`),
    '/v1/workloads/metrics?sort_by=power_usage&order=asc&limit=1',
  ];

  const admin = () => {
    if (rig === undefined) throw new Error('No rig');
    return rig.admin;
  };
  const scrapedSamples = async (replica: Replica): Promise<number> =>
    sumOf(parseMetrics(await (await fetch(`${replica.adminUrl}/metrics`)).text()), 'gpucap_scrape_samples_total');

  it('only the writer scrapes, all three answer the same bytes, and the survivors still do after the writer is killed', async () => {
    if (rig === undefined || fleet === undefined) throw new Error('No rig');
    const env = {
      GPUCAP_TELEMETRY_ENABLED: 'true',
      GPUCAP_EXPORTER_PORT: String(fleet.port),
      GPUCAP_SCRAPE_INTERVAL_SECONDS: '2',
      GPUCAP_SCRAPE_TIMEOUT_SECONDS: '1',
      GPUCAP_TELEMETRY_SUMMARY_SECONDS: '1',
    };
    const replicas = [await rig.start('replica-a', { env }), await rig.start('replica-b', { env }), await rig.start('replica-c', { env })];
    await Promise.all(replicas.map((r) => waitReady(r)));
    const [jobId] = ids;
    // Every replica, the standbys included, answers from the writer's buckets.
    for (const replica of replicas) {
      await waitFor(
        async () => {
          const answer = await apiGet(replica.url, `/v1/workloads/${jobId}/metrics?metrics=gpu_utilization`, admin());
          return JSON.parse(answer.body)?.data?.metrics?.gpu_utilization?.avg === 50 ? true : undefined;
        },
        { what: `${replica.instanceId} to answer the job's last hour`, timeoutMs: 30_000 },
      );
    }
    // The exporters stop answering: what is stored stops changing, and every answer must agree.
    exporters.forEach((exporter) => exporter.fault({ kind: 'status', status: 503 }));
    await sleep(4_000);
    const writer = await waitFor(() => currentWriter(replicas, rig?.clusterId ?? ''), { what: 'the writer', timeoutMs: 10_000 });
    const scraped = await Promise.all(replicas.map(scrapedSamples));
    expect(scraped.filter((n) => n > 0), `samples scraped per replica: ${scraped.join(', ')}`).to.have.length(1);
    expect(scraped[replicas.indexOf(writer.replica)]).to.be.greaterThan(0);
    expect(await answerDifferences(replicas, paths(), rig.admin)).to.deep.equal([]);
    const before = await Promise.all(paths().map((path) => apiGet(writer.replica.url, path, admin())));
    const job = JSON.parse(before[0]?.body ?? '{}');
    expect(job.data.metrics.gpu_utilization).to.deep.equal({ avg: 50, min: 40, max: 60, current: 50 });
    expect(job.data.metrics.power_usage).to.deep.equal({ avg: 350.4, min: 300.5, max: 400.3, current: 350.4 });
    // Percentiles from the stored buckets: each holds both GPUs (40 % and 60 %), so every one is the
    // bucket's mean, within its max − min (20) of the exact value (p50 40, p99 60).
    const percentiles = JSON.parse(before[ids.length * 4]?.body ?? '{}');
    expect(percentiles.data.metrics.gpu_utilization).to.deep.equal({ avg: 50, min: 40, max: 60, current: 50, p50: 50, p95: 50, p99: 50 });
    const lifetime = JSON.parse(before[ids.length * 4 + 1]?.body ?? '{}');
    expect(lifetime.data.metrics.gpu_utilization).to.deep.include({ p50: 50, p95: 50, p99: 50 });

    writer.replica.signal('SIGKILL');
    const survivors = replicas.filter((r) => r !== writer.replica);
    await waitFor(() => currentWriter(survivors, rig?.clusterId ?? ''), { what: 'a new writer', timeoutMs: 30_000 });
    expect(await answerDifferences(survivors, paths(), rig.admin)).to.deep.equal([]);
    const after = await Promise.all(paths().map((path) => apiGet(survivors[0]?.url ?? '', path, admin())));
    expect(after.map((a) => withoutRequestId(a.body))).to.deep.equal(before.map((b) => withoutRequestId(b.body)));
  });
});
