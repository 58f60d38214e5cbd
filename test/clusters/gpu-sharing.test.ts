// Every way a pod holds part of a GPU, through the real service on the simulated API: GFD's labelled
// nodes (MIG mixed and single, time-slicing plain and renamed, MPS), KAI fractions and HAMi vGPUs from
// their fixtures, and whole GPUs beside them. Each workload's allocated_gpus, gpu_sharing and
// gpu_model are the rules' (docs/workloads.md, "How GPUs are counted"), its GPU-hours integrate
// allocated_gpus, and the team's statistics add them up.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { nodeFixture, podFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

const HOUR_MS = 3_600_000;
const NAMESPACE = 'ml';

interface Expected {
  name: string;
  gpuCount: number;
  allocated: number;
  sharing: string;
  model: string | null;
}

const EXPECTED: readonly Expected[] = [
  { name: 'mig-1g', gpuCount: 1, allocated: 1 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' },
  { name: 'mig-3g-pair', gpuCount: 2, allocated: 6 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' },
  { name: 'mig-single', gpuCount: 1, allocated: 1 / 7, sharing: 'mig', model: 'NVIDIA-A100-SXM4-40GB' },
  { name: 'sliced-pair', gpuCount: 2, allocated: 0.5, sharing: 'time_slicing', model: 'NVIDIA-A10G' },
  { name: 'sliced-renamed', gpuCount: 1, allocated: 0.25, sharing: 'time_slicing', model: 'NVIDIA-A10G' },
  { name: 'mps-worker', gpuCount: 1, allocated: 0.25, sharing: 'mps', model: 'NVIDIA-L4' },
  { name: 'whole-pair', gpuCount: 2, allocated: 2, sharing: 'exclusive', model: 'NVIDIA-H100-80GB-HBM3' },
  { name: 'notebook-ana', gpuCount: 1, allocated: 0.5, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  { name: 'finetune-lora', gpuCount: 2, allocated: 1, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  { name: 'embed-worker', gpuCount: 1, allocated: 2000 / 81559, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  { name: 'chat-small', gpuCount: 1, allocated: 0.3, sharing: 'fractional', model: null },
];

/** A running pod asking `resources` on `node`, started at `startedAt`. */
function podOn(name: string, node: string, resources: Record<string, string>, startedAt: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'trainer', resources: { limits: resources, requests: resources } }] },
    status: running(startedAt),
  };
}

/** A fixture's pod, moved to the test's namespace and started at `startedAt`. */
function fixturePod(file: string, startedAt: number): KubeObject {
  const pod = podFixture(`gpu-sharing/${file}`);
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _created, ...metadata } = pod.metadata ?? {};
  return { apiVersion: 'v1', kind: 'Pod', ...pod, metadata: { ...metadata, namespace: NAMESPACE }, status: running(startedAt) } as KubeObject;
}

describe('service counting shared GPUs (MIG, time-slicing, MPS, KAI, HAMi)', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  const startedAt = Date.now() - HOUR_MS;

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'shared');
    sim.api.store.create('namespaces', aNamespace(NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' }));
    for (const file of [
      'node-mig-mixed-h100.json', 'node-mig-single-a100.json', 'node-time-slicing-a10g.json', 'node-time-slicing-renamed.json',
      'node-mps-l4.json', 'node-whole-h100.json', 'node-hami-l40s.json',
    ]) {
      const { resourceVersion: _rv, uid: _uid, ...metadata } = nodeFixture(`gpu-sharing/${file}`).metadata ?? {};
      sim.api.store.create('nodes', { ...nodeFixture(`gpu-sharing/${file}`), metadata } as KubeObject);
    }
    const pods = [
      podOn('mig-1g', 'gpu-h100-mig-mixed-1', { 'nvidia.com/mig-1g.10gb': '1' }, startedAt),
      podOn('mig-3g-pair', 'gpu-h100-mig-mixed-1', { 'nvidia.com/mig-3g.40gb': '2' }, startedAt),
      podOn('mig-single', 'ip-10-0-41-17.ec2.internal', { 'nvidia.com/gpu': '1' }, startedAt),
      podOn('sliced-pair', 'ip-10-0-52-201.ec2.internal', { 'nvidia.com/gpu': '2' }, startedAt),
      podOn('sliced-renamed', 'ip-10-0-52-88.ec2.internal', { 'nvidia.com/gpu.shared': '1' }, startedAt),
      podOn('mps-worker', 'ip-10-0-63-140.ec2.internal', { 'nvidia.com/gpu': '1' }, startedAt),
      podOn('whole-pair', 'gpu-h100-whole-1', { 'nvidia.com/gpu': '2' }, startedAt),
      fixturePod('pod-kai-fraction.json', startedAt),
      fixturePod('pod-kai-fraction-multi.json', startedAt),
      fixturePod('pod-kai-gpu-memory.json', startedAt),
      fixturePod('pod-hami-cores.json', startedAt),
    ];
    for (const pod of pods) sim.api.store.create('pods', pod);
    ({ service: t } = await startIndexed({}));
  });

  /** The service on the simulated cluster with `env` besides, once it lists every shared pod. */
  async function startIndexed(env: Record<string, string>): Promise<{ service: TestService; listed: { name: string; workload_id: string }[] }> {
    const service = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20', ...env },
    });
    const listed = await waitFor(async () => {
      const body = (await service.get('/v1/workloads?limit=100')).body.data?.workloads as { name: string; workload_id: string }[] | undefined;
      return body?.length === EXPECTED.length ? body : undefined;
    }, { what: 'every shared pod indexed', timeoutMs: 15_000 });
    return { service, listed };
  }

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  async function workload(name: string): Promise<Record<string, unknown>> {
    const listed = (await t.get('/v1/workloads?limit=100')).body.data.workloads as { name: string; workload_id: string }[];
    const id = listed.find((w) => w.name === name)?.workload_id;
    expect(id, name).to.be.a('string');
    return (await t.get(`/v1/workloads/${id}`)).body.data as Record<string, unknown>;
  }

  for (const expected of EXPECTED) {
    it(`counts ${expected.name}: ${expected.gpuCount} device(s), ${expected.allocated.toFixed(4)} GPUs, ${expected.sharing}`, async () => {
      const w = await workload(expected.name);
      expect(w.gpu_count).to.equal(expected.gpuCount);
      expect(w.allocated_gpus).to.equal(Math.round(expected.allocated * 1e4) / 1e4);
      expect(w.gpu_sharing).to.equal(expected.sharing);
      expect(w.gpu_model).to.equal(expected.model);
      // An hour at the share (plus the moments since): gpu_hours_used integrates allocated_gpus.
      const hours = expected.allocated * (Date.now() - startedAt) / HOUR_MS;
      expect(w.gpu_hours_used as number).to.be.closeTo(hours, expected.allocated * 0.01 + 1e-4);
    });
  }

  it('counts every device as a whole GPU with gpu_hours_basis: devices, and still says how it was shared', async () => {
    const { service: devices, listed } = await startIndexed({ GPUCAP_GPU_HOURS_BASIS: 'devices' });
    try {
      for (const name of ['mig-1g', 'sliced-pair', 'notebook-ana']) {
        const id = listed.find((w) => w.name === name)?.workload_id;
        const w = (await devices.get(`/v1/workloads/${id}`)).body.data;
        const expected = EXPECTED.find((e) => e.name === name) as Expected;
        expect([w.allocated_gpus, w.gpu_sharing], name).to.deep.equal([expected.gpuCount, expected.sharing]);
        expect(w.gpu_hours_used, name).to.be.closeTo(expected.gpuCount * (Date.now() - startedAt) / HOUR_MS, 0.02);
      }
    } finally {
      await devices.stop();
    }
  });

  it("adds them up in the team's statistics", async () => {
    const stats = (await t.get('/v1/workloads/stats?time_range=last_7_days&group_by=initiative_id')).body.data;
    const elapsedHours = (Date.now() - startedAt) / HOUR_MS;
    const allocated = EXPECTED.reduce((sum, e) => sum + e.allocated, 0);
    expect(stats.summary.total_workloads).to.equal(EXPECTED.length);
    expect(stats.summary.total_gpu_hours).to.be.closeTo(allocated * elapsedHours, allocated * 0.01);
    const llm = (stats.grouped as { initiative_id: string; gpu_hours: number }[]).find((g) => g.initiative_id === 'llm');
    expect(llm?.gpu_hours).to.equal(stats.summary.total_gpu_hours);
  });

  it('groups the statistics by GPU model, each model summing its workloads\' shares', async () => {
    const body = (await t.get('/v1/workloads/stats?time_range=last_7_days&group_by=gpu_model&interval=day')).body.data;
    const elapsedHours = (Date.now() - startedAt) / HOUR_MS;
    const byModel = new Map<string | null, number>();
    for (const e of EXPECTED) byModel.set(e.model, (byModel.get(e.model) ?? 0) + e.allocated);
    const grouped = body.grouped as { gpu_model: string | null; workload_count: number; gpu_hours: number }[];
    expect(grouped.map((g) => g.gpu_model).sort()).to.deep.equal([...byModel.keys()].sort());
    for (const group of grouped) {
      const allocated = byModel.get(group.gpu_model) ?? 0;
      expect(group.gpu_hours, String(group.gpu_model)).to.be.closeTo(allocated * elapsedHours, allocated * 0.01 + 1e-4);
      expect(group.workload_count).to.equal(EXPECTED.filter((e) => e.model === group.gpu_model).length);
    }
    // The series holds the same groups, its entries summing to them.
    const series = body.series as { gpu_model: string | null; workload_count: number }[];
    expect(series.reduce((n, e) => n + e.workload_count, 0)).to.equal(EXPECTED.length);
  });
});
