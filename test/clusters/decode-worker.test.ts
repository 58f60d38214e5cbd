// The whole service with its watch streams parsed on the decode worker (GPUCAP_DECODE_WORKER=true, as
// from 4 CPUs): a pod created in the cluster reaches /v1 through the worker, with the fields the
// indexer reads, and the worker's gauges are on /metrics. The suites of test/k8s/ run the reflector's
// faults on both decoders; this is the composition.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aGpuPod, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('service parsing its watches on the decode worker', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    sim.api.store.create('namespaces', aNamespace('llm-train', { 'gpucap.io/initiative': 'llm', 'gpucap.io/organization': 'acme' }));
    sim.api.store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_CLUSTER_ID: 'gpu-east', GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20', GPUCAP_DECODE_WORKER: 'true' },
    });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  it('indexes a pod from the watch, attributed and running, and reports the decoder on /metrics', async () => {
    const pod = sim.api.store.create('pods', { ...aGpuPod('llm-train', 'probe', { gpus: 2, node: 'h100-1', labels: { 'gpucap.io/submitted-by': 'alice' } }) });
    sim.api.store.patchStatus('pods', { namespace: 'llm-train', name: 'probe' }, running(Date.now() - 60_000));
    const id = pod.metadata.uid ?? '';
    const found = await waitFor(async () => {
      const data = (await t.get(`/v1/workloads/${id}`)).body?.data as Record<string, unknown> | undefined;
      return data?.status === 'running' ? data : undefined;
    }, { what: 'the running pod in the index', timeoutMs: 10_000 });
    expect(found).to.include({ name: 'probe', initiative_id: 'llm', instance_type: 'p5.48xlarge', submitted_by: 'alice', gpu_count: 2 });
    const metrics = await (await fetch(`${t.adminUrl}/metrics`)).text();
    expect(metrics).to.match(/^gpucap_watch_decode_backlog_chunks\{[^}]*\} \d+$/m);
    expect(metrics).to.match(/^gpucap_watch_decoder_restarts\{[^}]*\} 0$/m);
  });
});
