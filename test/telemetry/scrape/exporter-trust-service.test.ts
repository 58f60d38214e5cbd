// The trust rules of the telemetry, through the service's real HTTP and the simulated kube API: an
// exporter pod in a team's namespace is never contacted, and a trusted exporter's series for a pod
// on another node counts for nobody, is counted on /metrics and logged once (docs/telemetry.md, "Trust").
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { SimDcgmFleet } from '../../../sim/dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../../../sim/dcgm-exporter/exporter.js';
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import { parseMetrics, sumOf } from '../../../bench/lib/service/metrics-text.js';
import { startTestService, type TestService } from '../../support/service-harness.js';
import { FAST_INFORMERS, dcgmValues, aGpuNode, aGpuPod, aNamespace, anExporterPod, running, startSimCluster, uidOf, type SimCluster } from '../../support/sim-cluster.js';
import { makeTempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait-for.js';

/** The service's own namespace: trusted besides exporter_namespaces (default: gpu-operator, …). */
const SERVICE_NAMESPACE = 'gpucap-system';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

describe('telemetry trust: only exporters of the trusted namespaces, only pods of their node', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let fleet: SimDcgmFleet;
  let t: TestService | undefined;
  let victim: KubeObject;
  let solo: KubeObject;
  /** On h100-1, in gpu-operator: the victim's GPU at 40 %. */
  let operator: SimExporterHandle;
  /** On h100-2, in the service's namespace: its own pod's GPU, and a series for the victim on h100-1. */
  let misreporting: SimExporterHandle;
  /** A team's pod on h100-1 labelled as an exporter, serving the victim at 100 %. */
  let forged: SimExporterHandle;
  const logged: LogLine[] = [];

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    fleet = await SimDcgmFleet.start();
    const store = sim.api.store;
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('namespaces', aNamespace('team-a', { 'gpucap.io/organization': 'acme' }));
    store.create('namespaces', aNamespace('gpu-operator'));
    store.create('namespaces', aNamespace(SERVICE_NAMESPACE));
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    store.create('nodes', aGpuNode('h100-2', 'p5.48xlarge'));
    const started = Date.now() - 600_000;
    victim = store.create('pods', aGpuPod('llm', 'victim', { gpus: 1, node: 'h100-1' }));
    store.patchStatus('pods', victim.metadata, running(started));
    solo = store.create('pods', aGpuPod('llm', 'solo', { gpus: 1, node: 'h100-2' }));
    store.patchStatus('pods', solo.metadata, running(started));

    operator = await fleet.add({ hostname: 'h100-1', gpus: [{ index: 0, uuid: 'GPU-a', pod: { pod: 'victim', namespace: 'llm', container: 'main' }, values: dcgmValues(40, 50, 300) }] });
    misreporting = await fleet.add({
      hostname: 'h100-2',
      gpus: [
        { index: 0, uuid: 'GPU-b', pod: { pod: 'solo', namespace: 'llm', container: 'main' }, values: dcgmValues(10, 40, 100) },
        { index: 1, uuid: 'GPU-c', pod: { pod: 'victim', namespace: 'llm', container: 'main' }, values: dcgmValues(100, 80, 700) },
      ],
    });
    forged = await fleet.add({
      hostname: 'h100-1-forged',
      gpus: [{ index: 0, uuid: 'GPU-a', pod: { pod: 'victim', namespace: 'llm', container: 'main' }, values: dcgmValues(100, 90, 700) }],
    });
    store.create('pods', anExporterPod('h100-1', operator.ip));
    store.create('pods', anExporterPod('h100-2', misreporting.ip, { namespace: SERVICE_NAMESPACE }));
    // The team's pod has the GPU Operator's label and name, and runs on the victim's node.
    store.create('pods', anExporterPod('h100-1', forged.ip, { namespace: 'team-a' }));

    const lines = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(JSON.parse(chunk.toString()) as LogLine);
        done();
      },
    });
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      logger: pino({ level: 'warn' }, lines),
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        GPUCAP_CLUSTER_ID: 'gpu-east',
        GPUCAP_NAMESPACE: SERVICE_NAMESPACE,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
        GPUCAP_EXPORTER_PORT: String(fleet.port),
        GPUCAP_SCRAPE_INTERVAL_SECONDS: '2',
        GPUCAP_SCRAPE_TIMEOUT_SECONDS: '1',
      },
    });
    // Three scrapes of the misreporting exporter after both pods are indexed with their figures.
    for (const workload of [victim, solo]) {
      await waitFor(async () => (await lastHourOf(workload))?.current ?? undefined, { what: `the last hour of ${workload.metadata.name ?? ''}`, timeoutMs: 15_000 });
    }
    const scraped = misreporting.requests;
    await waitFor(() => misreporting.requests >= scraped + 3, { what: 'three more scrapes of the h100-2 exporter', timeoutMs: 15_000 });
  });

  after(async () => {
    await t?.stop();
    await fleet?.close();
    await sim?.close();
    temp?.remove();
  });

  const service = (): TestService => {
    if (t === undefined) throw new Error('service not started');
    return t;
  };
  async function lastHourOf(workload: KubeObject): Promise<{ avg: number; min: number; max: number; current: number } | undefined> {
    const body = (await service().get(`/v1/workloads/${uidOf(workload)}/metrics?metrics=gpu_utilization`)).body;
    return body?.data?.metrics?.gpu_utilization;
  }
  const series = async () => parseMetrics(await (await fetch(`${service().adminUrl}/metrics`)).text());

  it('never contacts an exporter pod in a team\'s namespace, and counts it as ignored', async () => {
    expect(forged.requests).to.equal(0);
    expect(operator.requests).to.be.at.least(3);
    const metrics = await series();
    expect(sumOf(metrics, 'gpucap_telemetry_exporters_ignored', { cluster: 'gpu-east', reason: 'untrusted_namespace' })).to.equal(1);
    expect(sumOf(metrics, 'gpucap_exporters', { cluster: 'gpu-east' })).to.equal(2);
    const warned = logged.filter((line) => line.reason === 'untrusted_namespace');
    expect(warned.map(({ namespace, pod, node, podIP }) => ({ namespace, pod, node, podIP }))).to.deep.equal([
      { namespace: 'team-a', pod: 'nvidia-dcgm-exporter-h100-1', node: 'h100-1', podIP: forged.ip },
    ]);
  });

  it('keeps each workload\'s figures what the exporter of its node says: the forged 100 % counts for nobody', async () => {
    expect(await lastHourOf(victim)).to.deep.equal({ avg: 40, min: 40, max: 40, current: 40 });
    // The misreporting exporter's own pod counts.
    expect(await lastHourOf(solo)).to.deep.equal({ avg: 10, min: 10, max: 10, current: 10 });
    const ranking = (await service().get('/v1/workloads/metrics?sort_by=gpu_utilization')).body;
    expect(ranking.data.workloads).to.deep.equal([
      { workload_id: uidOf(victim), name: 'victim', initiative_id: 'llm', gpu_utilization: { avg: 40, current: 40 } },
      { workload_id: uidOf(solo), name: 'solo', initiative_id: 'llm', gpu_utilization: { avg: 10, current: 10 } },
    ]);
  });

  it('counts the series for a pod on another node as dropped, by reason, and logs the exporter\'s first drop once', async () => {
    const metrics = await series();
    expect(sumOf(metrics, 'gpucap_telemetry_samples_dropped_total', { cluster: 'gpu-east', reason: 'other_node' })).to.be.at.least(3);
    expect(sumOf(metrics, 'gpucap_telemetry_samples_dropped_total', { reason: 'untrusted_namespace' })).to.equal(0);
    const drops = logged.filter((line) => line.reason === 'other_node');
    expect(drops).to.have.length(1);
    expect(drops[0]).to.deep.include({
      level: 40,
      exporter: `gpu-east/${SERVICE_NAMESPACE}/nvidia-dcgm-exporter-h100-2`,
      namespace: SERVICE_NAMESPACE,
      pod: 'nvidia-dcgm-exporter-h100-2',
      node: 'h100-2',
      gpu: 'GPU-c',
      samplePod: 'llm/victim',
      samplePodNode: 'h100-1',
    });
    const readyz = (await (await fetch(`${service().adminUrl}/readyz`)).json()) as {
      components: { telemetry: { exporters: { node: string; droppedSamples: number }[] } };
    };
    const byNode = new Map(readyz.components.telemetry.exporters.map((e) => [e.node, e.droppedSamples]));
    expect(byNode.get('h100-1')).to.equal(0);
    expect(byNode.get('h100-2')).to.be.at.least(3);
  });
});
