// GPUCAP_WATCH_NAMESPACES: Pods and Jobs are watched in those namespaces only, one informer each, and
// a relist of one namespace never judges the workloads of another.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuPod, aNamespace, running, startSimCluster, uidOf, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('service watching a list of namespaces', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  const pods: Record<string, KubeObject> = {};

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'scoped');
    for (const namespace of ['ml', 'cv', 'other']) {
      sim.api.store.create('namespaces', aNamespace(namespace, { 'gpucap.io/organization': 'acme' }));
      pods[namespace] = sim.api.store.create('pods', aGpuPod(namespace, `${namespace}-1`));
      sim.api.store.patchStatus('pods', pods[namespace].metadata, running(Date.now() - 60_000));
    }
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_WATCH_NAMESPACES: 'ml,cv', GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20' },
    });
    await waitFor(async () => ((await fetch(`${t.adminUrl}/readyz`)).status === 200 ? true : undefined), { what: 'ready', timeoutMs: 10_000 });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  it('indexes the pods of the watched namespaces only, through one informer per namespace', async () => {
    const body = (await (await fetch(`${t.adminUrl}/readyz`)).json()) as { conditions: Record<string, unknown> };
    expect(Object.keys(body.conditions).filter((name) => name.startsWith('cluster/local/pods'))).to.have.members(['cluster/local/pods/ml', 'cluster/local/pods/cv']);
    expect(sim.api.faults.requestCount('/api/v1/pods')).to.equal(0);
    const list = await t.get('/v1/workloads');
    expect(list.body.data.workloads.map((w: { name: string; status: string }) => `${w.name} ${w.status}`)).to.have.members(['ml-1 running', 'cv-1 running']);
  });

  it('cancels a pod that vanished from one namespace during a relist, leaving the other namespace alone', async () => {
    // The ml watch is cut and its resumption hangs; meanwhile its pod is deleted and the history
    // compacted, so only a relist of ml finds out.
    sim.api.faults.hang({ count: 1, path: '/api/v1/namespaces/ml/pods', watch: true });
    // cv must relist too (its resumed watch gets 410), but its LISTs hang for a while: until then, the
    // only judgement of cv's pods could come, wrongly, from the relist of ml.
    sim.api.faults.hang({ count: 3, path: '/api/v1/namespaces/cv/pods', watch: false });
    sim.api.faults.dropWatches();
    sim.api.store.delete('pods', pods.ml.metadata);
    sim.api.faults.expireVersions();
    await waitFor(async () => ((await t.get(`/v1/workloads/${uidOf(pods.ml)}`)).body.data.status === 'cancelled' ? true : undefined), { what: 'ml-1 cancelled', timeoutMs: 10_000 });
    expect((await t.get(`/v1/workloads/${uidOf(pods.cv)}`)).body.data.status).to.equal('running');
  });
});
