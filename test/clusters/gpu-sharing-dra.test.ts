// GPUs from Dynamic Resource Allocation claims, through the real service on the simulated API serving
// resource.k8s.io/v1: NVIDIA's DRA driver's slices and classes from their fixtures, pods and a Job whose
// claims hold whole GPUs, a MIG device and a GPU shared by two pods. Each workload is counted by the
// devices its claims hold, a Job's claim deleted once its pod finished leaves its GPU-hours, and the
// team's statistics add them up. A cluster without the group is watched as before, and nothing about
// DRA is logged as an error.
import { expect } from 'chai';
import pino from 'pino';
import { Writable } from 'node:stream';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { objectFixture, podFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aNamespace, finished, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { capacityYaml } from '../support/capacity-yaml.js';
import { makeTempDir } from '../support/temp-dir.js';

const HOUR_MS = 3_600_000;
const NAMESPACE = 'ml';
const GPU_NODE = 'gpu-h100-dra-1';
const MIG_NODE = 'gpu-h100-dra-mig-1';
/** The service's own namespace, where its budget ConfigMap lives. */
const SERVICE_NAMESPACE = 'gpu-system';

/** A fixture as the simulator's store takes it: without what the server sets. */
function stored(object: Record<string, unknown>): KubeObject {
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _created, ...metadata } = object.metadata as Record<string, unknown>;
  return { ...object, metadata } as KubeObject;
}

/** A pod using one claim `claim` (by name, so no template), on `node`, started at `startedAt`. */
function claimingPod(name: string, claim: string, node: string, status: Record<string, unknown>, owner?: KubeObject): KubeObject {
  const spec = podFixture('gpu-sharing/pod-dra-claim.json').spec ?? {};
  const ownerReferences = owner === undefined ? undefined : [{ apiVersion: 'batch/v1', kind: 'Job', name: owner.metadata.name, uid: owner.metadata.uid, controller: true }];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, ...(ownerReferences === undefined ? {} : { ownerReferences }) },
    spec: { ...spec, nodeName: node, resourceClaims: [{ name: 'gpu', resourceClaimName: claim }] },
    status,
  } as KubeObject;
}

/** A claim allocated `devices` of `pool`, reserved for `pods`, with the fixture's request (class gpu.nvidia.com). */
function allocatedClaim(name: string, pool: string, devices: readonly string[], pods: readonly KubeObject[], extra: Record<string, unknown> = {}): KubeObject {
  const fixture = objectFixture<Record<string, unknown>>('gpu-sharing/dra-resourceclaim-allocated.json', 'ResourceClaim');
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name, namespace: NAMESPACE },
    spec: fixture.spec,
    status: {
      allocation: { devices: { results: devices.map((device) => ({ request: 'gpu', driver: 'gpu.nvidia.com', pool, device })) } },
      reservedFor: pods.map((pod) => ({ resource: 'pods', name: pod.metadata.name, uid: pod.metadata.uid })),
    },
    ...extra,
  } as KubeObject;
}

describe('service counting GPUs from DRA claims (simulated resource.k8s.io/v1)', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  const startedAt = Date.now() - HOUR_MS;
  const logged: { level: number; msg: string }[] = [];

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'dra', { dra: true });
    const store = sim.api.store;
    store.create('namespaces', aNamespace(NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' }));
    store.create('namespaces', aNamespace(SERVICE_NAMESPACE));
    store.create('configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'capacity-acme', namespace: SERVICE_NAMESPACE, labels: { 'gpucap.io/capacity': 'true' } },
      data: { 'capacity.yaml': capacityYaml() },
    });
    for (const node of [GPU_NODE, MIG_NODE]) store.create('nodes', aGpuNode(node, 'p5.48xlarge'));
    for (const file of ['dra-resourceslice-gpu.json', 'dra-resourceslice-mig.json']) {
      store.create('resourceslices', stored(objectFixture(`gpu-sharing/${file}`, 'ResourceSlice')));
    }
    for (const item of objectFixture<{ items: Record<string, unknown>[] }>('gpu-sharing/dra-deviceclass-gpu.json', 'List').items) {
      store.create('deviceclasses', stored(item));
    }
    // Pods first, claims after: the service maps them again when their claims come.
    const train = store.create('pods', claimingPod('train', 'train-gpus', GPU_NODE, running(startedAt)));
    const evalMig = store.create('pods', claimingPod('eval-mig', 'eval-mig', MIG_NODE, running(startedAt)));
    const inferA = store.create('pods', claimingPod('infer-a', 'shared-h100', GPU_NODE, running(startedAt)));
    const inferB = store.create('pods', claimingPod('infer-b', 'shared-h100', GPU_NODE, running(startedAt)));
    store.create('resourceclaims', allocatedClaim('train-gpus', GPU_NODE, ['gpu-0'], [train]));
    store.create('resourceclaims', allocatedClaim('eval-mig', MIG_NODE, ['gpu-0-mig-1g10gb-19-0'], [evalMig]));
    const shared = objectFixture<Record<string, unknown>>('gpu-sharing/dra-resourceclaim-shared.json', 'ResourceClaim');
    store.create('resourceclaims', allocatedClaim('shared-h100', GPU_NODE, ['gpu-1'], [inferA, inferB], { spec: shared.spec }));

    const lines = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    });
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      logger: pino({ level: 'info' }, lines),
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_NAMESPACE: SERVICE_NAMESPACE,
      },
    });
    await waitFor(async () => (await listed()).length === 4 || undefined, { what: 'the four claiming pods indexed', timeoutMs: 15_000 });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  async function listed(): Promise<{ name: string; workload_id: string }[]> {
    return ((await t.get('/v1/workloads?limit=100')).body.data?.workloads ?? []) as { name: string; workload_id: string }[];
  }

  async function workload(name: string): Promise<Record<string, unknown>> {
    const id = (await listed()).find((w) => w.name === name)?.workload_id;
    expect(id, name).to.be.a('string');
    return (await t.get(`/v1/workloads/${id}`)).body.data as Record<string, unknown>;
  }

  const cases = [
    { name: 'train', gpuCount: 1, allocated: 1, sharing: 'exclusive' },
    { name: 'eval-mig', gpuCount: 1, allocated: 1 / 7, sharing: 'mig' },
    { name: 'infer-a', gpuCount: 1, allocated: 0.5, sharing: 'time_slicing' },
    { name: 'infer-b', gpuCount: 1, allocated: 0.5, sharing: 'time_slicing' },
  ];
  for (const expected of cases) {
    it(`counts ${expected.name} by its claim: ${expected.allocated.toFixed(4)} GPUs, ${expected.sharing}`, async () => {
      const w = await workload(expected.name);
      expect([w.gpu_count, w.allocated_gpus, w.gpu_sharing, w.gpu_model]).to.deep.equal([
        expected.gpuCount, Math.round(expected.allocated * 1e4) / 1e4, expected.sharing, 'NVIDIA-H100-80GB-HBM3',
      ]);
      expect(w.gpu_hours_used as number).to.be.closeTo(expected.allocated * (Date.now() - startedAt) / HOUR_MS, expected.allocated * 0.01 + 1e-4);
    });
  }

  it('watches the DRA collections, reports them ready, and logs no error', async () => {
    const conditions = Object.keys((await t.readyz()).body.conditions ?? {});
    for (const resource of ['resourceclaims', 'resourceslices', 'deviceclasses']) {
      expect(conditions.filter((key) => key.startsWith('cluster/') && key.endsWith(`/${resource}`)), resource).to.have.length(1);
    }
    expect(logged.filter((line) => line.level >= 50), JSON.stringify(logged.filter((line) => line.level >= 50))).to.deep.equal([]);
  });

  it("keeps a Job's GPU-hours once its pod finished and the claim was deleted, and the Job completes with them", async () => {
    const store = sim.api.store;
    const job = store.create('jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'finetune', namespace: NAMESPACE },
      spec: { template: { spec: { ...podFixture('gpu-sharing/pod-dra-claim.json').spec, restartPolicy: 'Never' } } },
      status: { startTime: new Date(startedAt).toISOString() },
    } as KubeObject);
    const pod = store.create('pods', claimingPod('finetune-0', 'finetune-0-gpu', GPU_NODE, running(startedAt), job));
    const claim = store.create('resourceclaims', allocatedClaim('finetune-0-gpu', GPU_NODE, ['gpu-0', 'gpu-1'], [pod]));
    const jobId = job.metadata.uid ?? '';
    await waitFor(async () => (await t.get(`/v1/workloads/${jobId}`)).body.data?.allocated_gpus === 2 || undefined, { what: 'the Job at 2 GPUs', timeoutMs: 10_000 });

    const finishedAt = startedAt + HOUR_MS / 2;
    store.patchStatus('pods', { namespace: NAMESPACE, name: 'finetune-0' }, finished(startedAt, finishedAt, 0));
    // The claim controller takes the pod out of reservedFor and deallocates the claim; then the claim is deleted.
    store.patchStatus('resourceclaims', { namespace: NAMESPACE, name: 'finetune-0-gpu' }, {});
    store.delete('resourceclaims', { namespace: NAMESPACE, name: claim.metadata.name });
    const done = new Date(finishedAt + 60_000).toISOString();
    store.patchStatus('jobs', { namespace: NAMESPACE, name: 'finetune' }, {
      startTime: new Date(startedAt).toISOString(),
      completionTime: done,
      conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: done }],
    });
    const w = await waitFor(async () => {
      const body = (await t.get(`/v1/workloads/${jobId}`)).body.data;
      return body?.status === 'completed' ? body : undefined;
    }, { what: 'the Job completed', timeoutMs: 10_000 });
    expect([w.gpu_count, w.allocated_gpus, w.gpu_sharing]).to.deep.equal([2, 2, 'exclusive']);
    expect(w.gpu_hours_used).to.be.closeTo(1, 0.001);
  });

  it("adds them up in the team's statistics", async () => {
    const stats = (await t.get('/v1/workloads/stats?time_range=last_7_days&group_by=initiative_id')).body.data;
    const running = (1 + 1 / 7 + 0.5 + 0.5) * (Date.now() - startedAt) / HOUR_MS;
    const llm = (stats.grouped as { initiative_id: string; gpu_hours: number }[]).find((g) => g.initiative_id === 'llm');
    expect(llm?.gpu_hours).to.be.closeTo(running + 1, 0.05);
  });

  it("counts them against the team's budget: the llm initiative and the H100 pool use their GPU-hours", async () => {
    await waitFor(async () => (await t.get('/v1/capacity')).body.data?.initiatives, { what: 'the budget loaded', timeoutMs: 10_000 });
    const ids = (await listed()).map((w) => w.workload_id);
    let hours = 0;
    for (const id of ids) hours += (await t.get(`/v1/workloads/${id}`)).body.data.gpu_hours_used as number;
    const capacity = (await t.get('/v1/capacity')).body.data;
    const llm = (capacity.initiatives as { initiative_id: string; used_gpu_hours: number }[]).find((i) => i.initiative_id === 'llm');
    // Read after the records: running workloads have gained a moment's hours since.
    expect(llm?.used_gpu_hours, JSON.stringify(capacity.initiatives)).to.be.within(hours - 0.01, hours + 0.05);
    expect(capacity.pools[0].used_gpu_hours).to.be.within(hours - 0.01, hours + 0.05);
  });

  it('watches a cluster without resource.k8s.io as before: no DRA informer, no error', async () => {
    const plain = await startSimCluster(temp.path, 'plain');
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    });
    const service = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      logger: pino({ level: 'info' }, sink),
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: plain.kubeconfigPath },
    });
    try {
      await waitFor(async () => (await service.readyz()).status === 200 || undefined, { what: 'ready without DRA', timeoutMs: 15_000 });
      const conditions = Object.keys((await service.readyz()).body.conditions ?? {});
      expect(conditions.filter((key) => /resourceclaims|resourceslices|deviceclasses/.test(key))).to.deep.equal([]);
      expect(lines.filter((line) => line.level >= 40 && /resource\.k8s\.io|DRA|claim/i.test(line.msg)).map((line) => line.msg)).to.deep.equal([]);
      expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).to.deep.equal([]);
    } finally {
      await service.stop();
      await plain.close();
    }
  });
});
