// The fleet now against a real kube-apiserver (envtest, v1.20), watched as gpucap-reader with only the
// chart's ClusterRole and Role. The test plays kubelet, device plugin, GFD and scheduler: it creates
// GPU Nodes (GFD labels, a time-sliced one) and writes their capacity, allocatable and Ready condition
// through the status subresource, binds pods to them and sets them Running the same way. GET /v1/fleet
// must give the figures of now exactly and GET /v1/fleet/nodes each node's state and split; cordoning a
// node (spec.unschedulable), a pod that ends and a node that becomes Ready again move the GPUs within
// seconds. The same world as test/fleet/fleet-now-service.test.ts on the simulated API.
import { expect } from 'chai';
import type { V1Node, V1NodeStatus } from '@kubernetes/client-node';
import { AdminClient } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { GPU, capacityConfigMap, forCreate, gpuPod, runningStatus, terminatedStatus } from '../support/envtest/objects.js';
import { capacityYaml } from '../support/capacity-yaml.js';
import { nodeFrom } from '../support/fleet-fixtures.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { waitFor } from '../support/wait-for.js';

const CLUSTER = 'envtest';
/** The workloads' namespace: acme's llm initiative. */
const NAMESPACE = 'ml';
/** The service's own namespace: acme's budget ConfigMap (pool h100 = p5.48xlarge), read through the chart's Role. */
const SERVICE_NAMESPACE = 'gpucap-system';
const H100 = 'NVIDIA-H100-80GB-HBM3';
const MERGE = 'application/merge-patch+json';
/** As the other envtest suites: quick retries, and no stall watchdog during the file (a quiet v1.20 watch gets no bookmark). */
const INFORMERS = { tuning: { backoff: { baseMs: 100, maxMs: 1000 }, stallTimeoutMs: 120_000 }, dependencyWaitMs: 2_000 };
/** "Within a few seconds": a watch event on a healthy API server arrives in well under one. */
const CHANGE_SEEN_MS = 5_000;

type Now = Record<'total_gpus' | 'allocated_gpus' | 'unallocated_gpus' | 'unavailable_gpus' | 'nodes' | 'nodes_unavailable', number>;

/** `now` of GET /v1/fleet: GPUs total, allocated, unallocated and unavailable; GPU nodes, and those cordoned or not ready. */
function figures(total: number, allocated: number, unallocated: number, unavailable: number, nodes: number, nodesUnavailable: number): Now {
  return {
    total_gpus: total,
    allocated_gpus: allocated,
    unallocated_gpus: unallocated,
    unavailable_gpus: unavailable,
    nodes,
    nodes_unavailable: nodesUnavailable,
  };
}

describe('The fleet now against a real kube-apiserver (envtest v1.20), watched as gpucap-reader', function () {
  this.timeout(30_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let t: TestService | undefined;
  const startedAt = Date.now() - 3_600_000;

  /** A Node as its kubelet registers it (no status), then the status it and the device plugin write. */
  async function registerNode(node: V1Node): Promise<void> {
    const name = node.metadata?.name ?? '';
    await admin.call('POST', '/api/v1/nodes', forCreate(node));
    await admin.call('PATCH', `/api/v1/nodes/${name}/status`, { status: node.status }, MERGE);
  }

  /** A pod bound to `node` (what the scheduler does), set Running through the status subresource unless `status` says otherwise. */
  async function bindPod(name: string, node: string, gpus: number, status: 'running' | 'pending' | 'finished' = 'running'): Promise<void> {
    await admin.createPod(NAMESPACE, gpuPod(name, { node, gpus }));
    if (status === 'running') await admin.patchPodStatus(NAMESPACE, name, runningStatus(startedAt));
    if (status === 'finished') await admin.patchPodStatus(NAMESPACE, name, terminatedStatus(startedAt, startedAt + 60_000, 0));
  }

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    await admin.bindChartRulesToReader();
    await admin.createNamespace(SERVICE_NAMESPACE);
    await admin.bindChartRoleToReader(SERVICE_NAMESPACE);
    await admin.createConfigMap(SERVICE_NAMESPACE, capacityConfigMap('capacity-acme', capacityYaml()));
    await admin.createNamespace(NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' });

    // 8 whole H100s, ready; a time-sliced A10G node (4 GPUs, 16 replicas), cordoned; 8 H100s not ready;
    // 8 H100s with one taken out of allocatable by the device plugin; and a CPU node, no part of the fleet.
    await registerNode(nodeFrom('node-whole-h100.json', 'gpu-a', 'p5.48xlarge') as V1Node);
    await registerNode(nodeFrom('node-time-slicing-a10g.json', 'gpu-b', 'g5.12xlarge', { unschedulable: true }) as V1Node);
    await registerNode(nodeFrom('node-whole-h100.json', 'gpu-c', 'p5.48xlarge', { ready: 'False' }) as V1Node);
    await registerNode(nodeFrom('node-whole-h100.json', 'gpu-d', 'p5.48xlarge', { allocatable: { [GPU]: '7' } }) as V1Node);
    const cpuStatus: V1NodeStatus = { capacity: { cpu: '64' }, conditions: [{ type: 'Ready', status: 'True' }] };
    await registerNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'cpu-1' }, status: cpuStatus });

    await bindPod('train', 'gpu-a', 4);
    await bindPod('waiting', 'gpu-a', 2, 'pending');
    await bindPod('sliced', 'gpu-b', 2);
    await bindPod('eval', 'gpu-d', 2);
    await bindPod('done', 'gpu-d', 1, 'finished');

    t = await startTestService({
      clock: 'system',
      informers: INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: envtest.readerKubeconfig,
        GPUCAP_CLUSTER_ID: CLUSTER,
        GPUCAP_CLUSTER_ORGANIZATION_ID: 'acme',
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_NAMESPACE: SERVICE_NAMESPACE,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
    await waitFor(async () => (await service().readyz()).status === 200, {
      timeoutMs: 30_000,
      what: 'the service\'s /readyz to answer 200 once its informers and ConfigMaps synced',
    });
    await waitFor(async () => (await now()).allocated_gpus === 6.5, { timeoutMs: 15_000, what: 'the running pods\' GPUs allocated' });
  });

  after(async () => {
    await t?.stop();
    await envtest?.stop();
  });

  function service(): TestService {
    if (t === undefined) throw new Error('The service is not running');
    return t;
  }

  /** GET /v1/fleet as acme's ORG_ADMIN: its `now`. */
  async function now(): Promise<Now> {
    const response = await service().get('/v1/fleet');
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.data.now;
  }

  /** GET /v1/fleet/nodes: the node named `name`. */
  async function fleetNode(name: string): Promise<JsonBody> {
    const response = await service().get('/v1/fleet/nodes');
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.data.nodes.find((n: { node: string }) => n.node === name);
  }

  /** Polls GET /v1/fleet until `now` includes `expected`; returns it and how long after `since` (the change's request) it showed. */
  async function nowShows(expected: Partial<Now>, what: string, since: number): Promise<{ now: Now; ms: number }> {
    const seen = await waitFor(async () => {
      const current = await now();
      expect(current).to.include(expected);
      return current;
    }, { timeoutMs: CHANGE_SEEN_MS, what: `GET /v1/fleet's now to show ${JSON.stringify(expected)} (${what})`, intervalMs: 50 });
    return { now: seen, ms: Date.now() - since };
  }

  it('gives the figures of now exactly: total = allocated + unallocated + unavailable', async () => {
    // 8 + 4 + 8 + 8 GPUs; allocated 4 (gpu-a) + 2 of 4 replicas (gpu-b) + 2 (gpu-d), the pending and the
    // finished pod nothing; unavailable the free GPUs of cordoned gpu-b (3.5) and not ready gpu-c (8),
    // and gpu-d's unhealthy one.
    expect(await now()).to.deep.equal({
      total_gpus: 28, allocated_gpus: 6.5, unallocated_gpus: 9, unavailable_gpus: 12.5, nodes: 4, nodes_unavailable: 2,
    });
    const byModel = (await service().get('/v1/fleet?group_by=gpu_model')).body.data.grouped.map((g: JsonBody) => ({
      key: g.key,
      total_gpus: g.total_gpus,
      allocated_gpus: g.allocated_gpus,
      unallocated_gpus: g.unallocated_gpus,
      unavailable_gpus: g.unavailable_gpus,
    }));
    expect(byModel).to.deep.equal([
      { key: H100, total_gpus: 24, allocated_gpus: 6, unallocated_gpus: 9, unavailable_gpus: 9 },
      { key: 'NVIDIA-A10G', total_gpus: 4, allocated_gpus: 0.5, unallocated_gpus: 0, unavailable_gpus: 3.5 },
    ]);
  });

  it('lists every GPU node with its state, pool, sharing and split, and no CPU node', async () => {
    const response = await service().get('/v1/fleet/nodes');
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.metadata).to.deep.equal({ total_count: 4 });
    const common = { cluster_id: CLUSTER, unhealthy_gpus: 0 };
    const h100 = { gpu_model: H100, instance_type: 'p5.48xlarge', pool_id: 'h100', gpu_sharing: 'exclusive', total_gpus: 8 };
    expect(response.body.data.nodes).to.deep.equal([
      { ...common, ...h100, node: 'gpu-a', state: 'ready', allocated_gpus: 4, unallocated_gpus: 4, unavailable_gpus: 0 },
      { ...common, node: 'gpu-b', gpu_model: 'NVIDIA-A10G', instance_type: 'g5.12xlarge', pool_id: null, state: 'cordoned',
        gpu_sharing: 'time_slicing', total_gpus: 4, allocated_gpus: 0.5, unallocated_gpus: 0, unavailable_gpus: 3.5 },
      { ...common, ...h100, node: 'gpu-c', state: 'not_ready', allocated_gpus: 0, unallocated_gpus: 0, unavailable_gpus: 8 },
      { ...common, ...h100, node: 'gpu-d', state: 'ready', allocated_gpus: 2, unallocated_gpus: 5, unavailable_gpus: 1, unhealthy_gpus: 1 },
    ]);
  });

  it('moves a node\'s free GPUs to unavailable within seconds of a cordon through the API, keeping its pod\'s GPUs allocated', async () => {
    const requested = Date.now();
    await admin.call('PATCH', '/api/v1/nodes/gpu-a', { spec: { unschedulable: true } }, MERGE);
    const cordoned = await nowShows({ unavailable_gpus: 16.5 }, 'gpu-a cordoned', requested);
    console.log(`      the cordon showed in GET /v1/fleet ${cordoned.ms} ms after its PATCH was sent`);
    expect(cordoned.now).to.deep.equal(figures(28, 6.5, 5, 16.5, 4, 3));
    const node = await fleetNode('gpu-a');
    expect(node).to.include({ state: 'cordoned', total_gpus: 8, allocated_gpus: 4, unallocated_gpus: 0, unavailable_gpus: 4 });
  });

  it('frees the share of a pod that ends, on the cordoned node as unavailable', async () => {
    const requested = Date.now();
    await admin.patchPodStatus(NAMESPACE, 'train', terminatedStatus(startedAt, requested, 0));
    const freed = await nowShows({ allocated_gpus: 2.5 }, 'train ended', requested);
    expect(freed.now).to.deep.equal(figures(28, 2.5, 5, 20.5, 4, 3));
    expect(await fleetNode('gpu-a')).to.include({ state: 'cordoned', allocated_gpus: 0, unallocated_gpus: 0, unavailable_gpus: 8 });
  });

  it('returns the GPUs of a node whose kubelet reports Ready again, and of an uncordoned one, to unallocated', async () => {
    const ready: V1NodeStatus = {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
    };
    const readyAt = Date.now();
    await admin.call('PATCH', '/api/v1/nodes/gpu-c/status', { status: ready }, MERGE);
    const back = await nowShows({ nodes_unavailable: 2 }, 'gpu-c Ready', readyAt);
    expect(back.now).to.deep.equal(figures(28, 2.5, 13, 12.5, 4, 2));
    expect(await fleetNode('gpu-c')).to.include({ state: 'ready', unallocated_gpus: 8, unavailable_gpus: 0 });

    const uncordonAt = Date.now();
    await admin.call('PATCH', '/api/v1/nodes/gpu-a', { spec: { unschedulable: null } }, MERGE);
    const uncordoned = await nowShows({ nodes_unavailable: 1 }, 'gpu-a uncordoned', uncordonAt);
    expect(uncordoned.now).to.deep.equal(figures(28, 2.5, 21, 4.5, 4, 1));
  });
});
