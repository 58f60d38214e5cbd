// Budgets from live ConfigMaps, through the whole service on the simulated API: created, edited,
// broken (the last valid one stays in force), fixed, contested and deleted while the service runs.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aGpuPod, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';
import { capacityYaml } from '../support/capacity-yaml.js';

const NAMESPACE = 'gpu-system';

function aCapacityConfigMap(name: string, text: string, labels: Record<string, string> = { 'gpucap.io/capacity': 'true' }): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE, labels }, data: { 'capacity.yaml': text } };
}

describe('capacity budgets from ConfigMaps, live', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  let configMap: KubeObject;

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    const store = sim.api.store;
    store.create('namespaces', aNamespace(NAMESPACE));
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    const pod = store.create('pods', aGpuPod('llm', 'train-0', { gpus: 2, node: 'h100-1' }));
    store.patchStatus('pods', pod.metadata, running(Date.now() - 3_600_000));
    configMap = store.create('configmaps', aCapacityConfigMap('capacity-acme', capacityYaml()));
    store.create('configmaps', aCapacityConfigMap('unrelated', 'not: yaml: of: ours', {}));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        GPUCAP_NAMESPACE: NAMESPACE,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  const capacity = async () => (await t.get('/v1/capacity')).body;
  const until = (what: string, test: (data: JsonBody) => boolean) =>
    waitFor(async () => {
      const body = await capacity();
      return body?.data !== undefined && test(body.data) ? body.data : undefined;
    }, { what, timeoutMs: 10_000 });
  const rejected = async (where: Record<string, string> = {}) => sumOf(parseMetrics(await (await fetch(`${t.adminUrl}/metrics`)).text()), 'gpucap_capacity_configmap_rejected', where);
  const readyz = async () => (await (await fetch(`${t.adminUrl}/readyz`)).json()) as { conditions: Record<string, { ready: boolean; failure: string | null }>; degraded: boolean };

  it('answers the budget of the labelled ConfigMap with the usage of the index, and waits for it before ready', async () => {
    const data = await until('the budget', (d) => d.summary.total_allocated_gpu_hours === 1000 && d.summary.total_used_gpu_hours > 1.9);
    expect(data.summary.total_used_gpu_hours).to.be.closeTo(2, 0.05);
    expect(data.summary.current_active_gpus).to.equal(2);
    expect(data.pools).to.have.length(1);
    expect(data.pools[0]).to.include({ pool_id: 'h100', name: 'H100 on-demand', allocated_gpu_hours: 600 });
    expect(data.pools[0].used_gpu_hours).to.be.closeTo(2, 0.05);
    expect(data.initiatives[0]).to.include({ initiative_id: 'llm', name: 'LLM Research', allocated_gpu_hours: 300 });
    expect((await readyz()).conditions.capacity).to.deep.include({ ready: true, failure: null });
  });

  it('follows an edit of the ConfigMap', async () => {
    configMap = sim.api.store.update('configmaps', { ...configMap, data: { 'capacity.yaml': capacityYaml({ allocated: 2000, llm: 500 }) } });
    const data = await until('the edited budget', (d) => d.summary.total_allocated_gpu_hours === 2000);
    expect(data.initiatives[0].allocated_gpu_hours).to.equal(500);
  });

  it('keeps the last valid budget when an edit breaks it, and reports the ConfigMap until it is fixed', async () => {
    configMap = sim.api.store.update('configmaps', { ...configMap, data: { 'capacity.yaml': 'organization_id: acme\nperiod: fortnight\nallocated_gpu_hours: 5\n' } });
    await waitFor(async () => ((await rejected({ configmap: `${NAMESPACE}/capacity-acme`, reason: 'invalid' })) === 1 ? true : undefined), { what: 'the rejection metric', timeoutMs: 10_000 });
    expect((await capacity()).data.summary.total_allocated_gpu_hours).to.equal(2000);
    // Readiness follows within its refresh period (250 ms).
    const state = await waitFor(async () => {
      const found = await readyz();
      return found.degraded ? found : undefined;
    }, { what: 'degraded', timeoutMs: 5_000 });
    expect(state.conditions.capacity?.failure).to.equal('1 capacity ConfigMap(s) rejected');
    const health = (await t.get('/v1/health')).body.data;
    expect(health.status).to.equal('healthy'); // the last valid budget is still served
    expect(health.checks).to.deep.include({ name: 'budgets', status: 'degraded' });
    configMap = sim.api.store.update('configmaps', { ...configMap, data: { 'capacity.yaml': capacityYaml({ allocated: 3000 }) } });
    await until('the fixed budget', (d) => d.summary.total_allocated_gpu_hours === 3000);
    expect(await rejected()).to.equal(0);
    await waitFor(async () => ((await readyz()).degraded ? undefined : true), { what: 'no longer degraded', timeoutMs: 5_000 });
  });

  it('ignores a second ConfigMap for the same organization and reports it', async () => {
    const second = sim.api.store.create('configmaps', aCapacityConfigMap('capacity-zz-acme', capacityYaml({ allocated: 1 })));
    await waitFor(async () => ((await rejected({ configmap: `${NAMESPACE}/capacity-zz-acme`, reason: 'duplicate_organization' })) === 1 ? true : undefined), { what: 'the conflict reported', timeoutMs: 10_000 });
    expect((await capacity()).data.summary.total_allocated_gpu_hours).to.equal(3000);
    sim.api.store.delete('configmaps', second.metadata);
    await waitFor(async () => ((await rejected()) === 0 ? true : undefined), { what: 'the conflict gone', timeoutMs: 10_000 });
  });

  it('attributes the workloads of a namespace the budget maps to an initiative, and follows the mapping', async () => {
    const store = sim.api.store;
    store.create('namespaces', aNamespace('cv-train', { 'gpucap.io/organization': 'acme' }));
    const pod = store.create('pods', aGpuPod('cv-train', 'detector', { gpus: 1, node: 'h100-1' }));
    store.patchStatus('pods', pod.metadata, running(Date.now() - 1_800_000));
    const initiativeOf = async () => (await t.get(`/v1/workloads/${pod.metadata.uid ?? ''}`)).body?.data?.initiative_id as string | undefined;
    await waitFor(async () => ((await initiativeOf()) === 'cv-train' ? true : undefined), { what: 'the namespace name as initiative', timeoutMs: 10_000 });
    configMap = store.update('configmaps', { ...configMap, data: { 'capacity.yaml': capacityYaml({ allocated: 3000, visionNamespaces: ['cv-train'] }) } });
    await waitFor(async () => ((await initiativeOf()) === 'vision' ? true : undefined), { what: 'the mapped initiative', timeoutMs: 10_000 });
    const data = await until('vision\'s usage', (d) => d.initiatives.some((i: { initiative_id: string; used_gpu_hours: number }) => i.initiative_id === 'vision' && i.used_gpu_hours > 0.45));
    expect(data.initiatives.find((i: { initiative_id: string }) => i.initiative_id === 'vision').used_gpu_hours).to.be.closeTo(0.5, 0.05);
    configMap = store.update('configmaps', { ...configMap, data: { 'capacity.yaml': capacityYaml({ allocated: 3000 }) } });
    await waitFor(async () => ((await initiativeOf()) === 'cv-train' ? true : undefined), { what: 'the namespace name again', timeoutMs: 10_000 });
  });

  it('serves each organization its own ConfigMap, and drops one whose label is removed', async () => {
    const globex = sim.api.store.create('configmaps', aCapacityConfigMap('capacity-globex', capacityYaml({ organization: 'globex', allocated: 50 })));
    const globexAllocated = async () => (await t.get('/v1/capacity', { as: t.callers.otherOrgAdmin })).body?.data?.summary?.total_allocated_gpu_hours as number | undefined;
    await waitFor(async () => ((await globexAllocated()) === 50 ? true : undefined), { what: 'globex\'s budget', timeoutMs: 10_000 });
    expect((await capacity()).data.summary.total_allocated_gpu_hours).to.equal(3000);
    sim.api.store.update('configmaps', { ...globex, metadata: { ...globex.metadata, labels: { 'gpucap.io/capacity': 'false' } } });
    await waitFor(async () => ((await globexAllocated()) === 0 ? true : undefined), { what: 'globex without a budget', timeoutMs: 10_000 });
  });

  it('drops the budget when the ConfigMap is deleted: allocated 0, usage as measured', async () => {
    sim.api.store.delete('configmaps', configMap.metadata);
    const data = await until('no budget', (d) => d.summary.total_allocated_gpu_hours === 0);
    expect(data.summary.total_used_gpu_hours).to.be.closeTo(2.5, 0.1); // train-0 (2 GPUs × 1 h) and detector (1 × 0.5 h)
    expect(data.summary.total_remaining_gpu_hours).to.be.closeTo(-data.summary.total_used_gpu_hours, 1e-9);
    expect(data.pools).to.deep.equal([]);
  });
});
