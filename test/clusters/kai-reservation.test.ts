// KAI Scheduler's reservation pods hold the physical GPUs behind its fractions, in their own
// namespace (kai-resource-reservation by default): they are no workloads, the fraction pods are charged.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { podFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuPod, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

describe("service with KAI Scheduler's reservation pods", function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'kai');
    for (const namespace of ['ml', 'kai-resource-reservation']) {
      sim.api.store.create('namespaces', aNamespace(namespace, { 'gpucap.io/organization': 'acme' }));
    }
    const { status, ...reservation } = podFixture('gpu-sharing/pod-kai-reservation.json');
    const { resourceVersion, ...metadata } = reservation.metadata ?? {};
    sim.api.store.create('pods', { apiVersion: 'v1', kind: 'Pod', ...reservation, metadata, status } as KubeObject);
    const trainer = sim.api.store.create('pods', aGpuPod('ml', 'trainer'));
    sim.api.store.patchStatus('pods', trainer.metadata, running(Date.now() - 60_000));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
    await waitFor(async () => ((await fetch(`${t.adminUrl}/readyz`)).status === 200 ? true : undefined), { what: 'ready', timeoutMs: 10_000 });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  it('indexes no reservation pod, and every other GPU pod', async () => {
    const names = async () => ((await t.get('/v1/workloads')).body.data.workloads as { name: string }[]).map((w) => w.name);
    await waitFor(async () => ((await names()).includes('trainer') ? true : undefined), { what: 'the trainer indexed', timeoutMs: 10_000 });
    expect(await names()).to.deep.equal(['trainer']);
    expect((await t.get('/v1/workloads/5167a098-5e7b-5249-8b8a-36f2a69e4daf')).status).to.equal(404);
  });
});
