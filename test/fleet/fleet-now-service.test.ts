// The fleet now, through the real service on the simulated API: GPU nodes of known GPUs and states
// (ready, cordoned, not ready, one GPU unhealthy) with running pods give the exact figures of
// GET /v1/fleet and every field of GET /v1/fleet/nodes; cordoning a node moves its free GPUs to
// unavailable within seconds, a pod that ends frees its share, only an ORG_ADMIN reads any of it, and
// the admin port's gauges say the same.
import { expect } from 'chai';
import sinon from 'sinon';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { noBudgets } from '../../src/query/empty-sources.js';
import { run } from '../../src/cli/kubectl/run.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { nodeFrom, podOn } from '../support/fleet-fixtures.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aNamespace, finished, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const NAMESPACE = 'ml';
const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 1000,
  pools: [{ poolId: 'h100', name: 'H100', allocatedGpuHours: 1000, instanceTypes: ['p5.48xlarge'] }],
  initiatives: [],
};

/** The figures now of a group of GET /v1/fleet (its GPU-hours over the range aside). */
function nowOf(group: Record<string, unknown>) {
  const { key, total_gpus, allocated_gpus, unallocated_gpus, unavailable_gpus, nodes, nodes_unavailable } = group;
  return { key, total_gpus, allocated_gpus, unallocated_gpus, unavailable_gpus, nodes, nodes_unavailable };
}

describe('the fleet now, on the simulated API (GET /v1/fleet, GET /v1/fleet/nodes)', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  const startedAt = Date.now() - 3_600_000;

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    sim.api.store.create('namespaces', aNamespace(NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' }));
    sim.api.store.create('nodes', nodeFrom('node-whole-h100.json', 'gpu-a', 'p5.48xlarge'));
    sim.api.store.create('nodes', nodeFrom('node-time-slicing-a10g.json', 'gpu-b', 'g5.12xlarge', { unschedulable: true }));
    sim.api.store.create('nodes', nodeFrom('node-whole-h100.json', 'gpu-c', 'p5.48xlarge', { ready: 'False' }));
    sim.api.store.create('nodes', nodeFrom('node-whole-h100.json', 'gpu-d', 'p5.48xlarge', { allocatable: { 'nvidia.com/gpu': '7' } }));
    sim.api.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cpu-1' }, status: { capacity: { cpu: '64' }, conditions: [{ type: 'Ready', status: 'True' }] } });
    sim.api.store.create('pods', podOn(NAMESPACE, 'train', 'gpu-a', { 'nvidia.com/gpu': '4' }, running(startedAt)));
    sim.api.store.create('pods', podOn(NAMESPACE, 'waiting', 'gpu-a', { 'nvidia.com/gpu': '2' }, { phase: 'Pending' }));
    sim.api.store.create('pods', podOn(NAMESPACE, 'sliced', 'gpu-b', { 'nvidia.com/gpu': '2' }, running(startedAt)));
    sim.api.store.create('pods', podOn(NAMESPACE, 'eval', 'gpu-d', { 'nvidia.com/gpu': '2' }, running(startedAt)));
    sim.api.store.create('pods', podOn(NAMESPACE, 'done', 'gpu-d', { 'nvidia.com/gpu': '1' }, finished(startedAt, startedAt + 60_000, 0)));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_CLUSTER_ID: 'gpu-east',
        GPUCAP_CLUSTER_ORGANIZATION_ID: 'acme', GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.now?.allocated_gpus === 6.5 ? true : undefined), {
      what: 'the running pods\' GPUs allocated', timeoutMs: 15_000,
    });
  });

  after(async () => {
    sinon.restore();
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  it('gives the figures of now exactly: total = allocated + unallocated + unavailable', async () => {
    const res = await t.get('/v1/fleet');
    expect(res.status).to.equal(200);
    // 8 + 4 + 8 + 8 GPUs; allocated 4 (gpu-a) + 2 of 4 replicas (gpu-b) + 2 (gpu-d); unavailable the
    // free GPUs of cordoned gpu-b (3.5) and not ready gpu-c (8), and gpu-d's unhealthy one.
    expect(res.body.data.now).to.deep.equal({
      total_gpus: 28, allocated_gpus: 6.5, unallocated_gpus: 9, unavailable_gpus: 12.5, nodes: 4, nodes_unavailable: 2,
    });
    expect(res.body.data.grouped).to.deep.equal([]);
  });

  it('groups by model, pool, cluster and node', async () => {
    const byModel = (await t.get('/v1/fleet?group_by=gpu_model')).body.data.grouped.map(nowOf);
    expect(byModel).to.deep.equal([
      { key: 'NVIDIA-H100-80GB-HBM3', total_gpus: 24, allocated_gpus: 6, unallocated_gpus: 9, unavailable_gpus: 9, nodes: 3, nodes_unavailable: 1 },
      { key: 'NVIDIA-A10G', total_gpus: 4, allocated_gpus: 0.5, unallocated_gpus: 0, unavailable_gpus: 3.5, nodes: 1, nodes_unavailable: 1 },
    ]);
    const byPool = (await t.get('/v1/fleet?group_by=pool_id')).body.data.grouped;
    expect(byPool.map((g: { key: string; total_gpus: number }) => [g.key, g.total_gpus])).to.deep.equal([['h100', 24], ['', 4]]);
    const byCluster = (await t.get('/v1/fleet?group_by=cluster_id')).body.data.grouped;
    expect(byCluster.map((g: { key: string; nodes: number }) => [g.key, g.nodes])).to.deep.equal([['gpu-east', 4]]);
    const byNode = (await t.get('/v1/fleet?group_by=node&gpu_model=NVIDIA-A10G')).body.data.grouped;
    expect(byNode.map((g: { key: string }) => g.key)).to.deep.equal(['gpu-east/gpu-b']);
  });

  it('lists every GPU node with its state, pool and split, and pages through them', async () => {
    const res = await t.get('/v1/fleet/nodes');
    expect(res.status).to.equal(200);
    expect(res.body.metadata).to.deep.equal({ total_count: 4 });
    const common = { cluster_id: 'gpu-east', unhealthy_gpus: 0 };
    expect(res.body.data.nodes).to.deep.equal([
      { ...common, node: 'gpu-a', gpu_model: 'NVIDIA-H100-80GB-HBM3', instance_type: 'p5.48xlarge', pool_id: 'h100', state: 'ready', gpu_sharing: 'exclusive',
        total_gpus: 8, allocated_gpus: 4, unallocated_gpus: 4, unavailable_gpus: 0 },
      { ...common, node: 'gpu-b', gpu_model: 'NVIDIA-A10G', instance_type: 'g5.12xlarge', pool_id: null, state: 'cordoned', gpu_sharing: 'time_slicing',
        total_gpus: 4, allocated_gpus: 0.5, unallocated_gpus: 0, unavailable_gpus: 3.5 },
      { ...common, node: 'gpu-c', gpu_model: 'NVIDIA-H100-80GB-HBM3', instance_type: 'p5.48xlarge', pool_id: 'h100', state: 'not_ready', gpu_sharing: 'exclusive',
        total_gpus: 8, allocated_gpus: 0, unallocated_gpus: 0, unavailable_gpus: 8 },
      { ...common, node: 'gpu-d', gpu_model: 'NVIDIA-H100-80GB-HBM3', instance_type: 'p5.48xlarge', pool_id: 'h100', state: 'ready', gpu_sharing: 'exclusive',
        total_gpus: 8, allocated_gpus: 2, unallocated_gpus: 5, unavailable_gpus: 1, unhealthy_gpus: 1 },
    ]);

    const walked: string[] = [];
    let token: string | undefined;
    do {
      const page = await t.get(`/v1/fleet/nodes?limit=3&pool_id=h100${token === undefined ? '' : `&next_token=${token}`}`);
      expect(page.status).to.equal(200);
      expect(page.body.metadata.total_count).to.equal(3);
      walked.push(...page.body.data.nodes.map((n: { node: string }) => n.node));
      token = page.body.metadata.next_token;
    } while (token !== undefined);
    expect(walked).to.deep.equal(['gpu-a', 'gpu-c', 'gpu-d']);

    const first = await t.get('/v1/fleet/nodes?limit=1');
    const reused = await t.get(`/v1/fleet/nodes?limit=1&state=ready&next_token=${first.body.metadata.next_token}`);
    expect([reused.status, reused.body.error.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    const notReady = await t.get('/v1/fleet/nodes?state=not_ready');
    expect(notReady.body.data.nodes.map((n: { node: string }) => n.node)).to.deep.equal(['gpu-c']);
  });

  it('answers CSV: every matching node, and the fleet with its groups', async () => {
    const nodes = await t.getText('/v1/fleet/nodes?state=ready', { headers: { accept: 'text/csv' } });
    expect(nodes.status).to.equal(200);
    const lines = nodes.text.trim().split(/\r?\n/);
    expect(lines[0]).to.equal('cluster_id,node,gpu_model,instance_type,pool_id,state,gpu_sharing,total_gpus,allocated_gpus,unallocated_gpus,unavailable_gpus,unhealthy_gpus');
    expect(lines.slice(1)).to.deep.equal([
      'gpu-east,gpu-a,NVIDIA-H100-80GB-HBM3,p5.48xlarge,h100,ready,exclusive,8,4,4,0,0',
      'gpu-east,gpu-d,NVIDIA-H100-80GB-HBM3,p5.48xlarge,h100,ready,exclusive,8,2,5,1,1',
    ]);
    const fleet = await t.getText('/v1/fleet?group_by=cluster_id', { headers: { accept: 'text/csv' } });
    const records = fleet.text.trim().split(/\r?\n/).map((line) => line.split(','));
    const columns = ['level', 'key', 'total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus', 'nodes', 'nodes_unavailable'];
    const header = records[0] ?? [];
    expect(records.map((record) => columns.map((column) => record[header.indexOf(column)]))).to.deep.equal([
      columns,
      ['fleet', 'acme', '28', '6.5', '9', '12.5', '4', '2'],
      ['group', 'gpu-east', '28', '6.5', '9', '12.5', '4', '2'],
    ]);
  });

  it('exports the split by cluster, model and state, and the nodes by state, on /metrics', async () => {
    const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
    // Every series also carries the registry's default label.
    const series = (name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`)).map((line) => line.replace(',service="gpu-capacity-api"', '')).sort();
    expect(series('gpucap_fleet_gpus')).to.deep.equal([
      'gpucap_fleet_gpus{cluster_id="gpu-east",gpu_model="NVIDIA-A10G",state="allocated"} 0.5',
      'gpucap_fleet_gpus{cluster_id="gpu-east",gpu_model="NVIDIA-A10G",state="unallocated"} 0',
      'gpucap_fleet_gpus{cluster_id="gpu-east",gpu_model="NVIDIA-A10G",state="unavailable"} 3.5',
      'gpucap_fleet_gpus{cluster_id="gpu-east",gpu_model="NVIDIA-H100-80GB-HBM3",state="allocated"} 6',
      'gpucap_fleet_gpus{cluster_id="gpu-east",gpu_model="NVIDIA-H100-80GB-HBM3",state="unallocated"} 9',
      'gpucap_fleet_gpus{cluster_id="gpu-east",gpu_model="NVIDIA-H100-80GB-HBM3",state="unavailable"} 9',
    ]);
    expect(series('gpucap_fleet_nodes')).to.deep.equal([
      'gpucap_fleet_nodes{cluster_id="gpu-east",state="cordoned"} 1',
      'gpucap_fleet_nodes{cluster_id="gpu-east",state="not_ready"} 1',
      'gpucap_fleet_nodes{cluster_id="gpu-east",state="ready"} 2',
    ]);
  });

  it('answers kubectl gpucap fleet and nodes with the API\'s figures, and refuses a MEMBER with exit 1', async () => {
    const kubectl = async (args: string[], caller = t.callers.admin) => {
      let out = '';
      let err = '';
      const code = await run([...args, '--url', t.url, '--token', caller.token, '--org', caller.organizationId], {
        env: { HOME: temp.path }, out: (s) => (out += s), err: (s) => (err += s), now: () => Date.now(),
        connect: () => Promise.reject(new Error('no kubeconfig in this test')),
      });
      return { code, out, err };
    };
    const fleet = await kubectl(['fleet']);
    expect(fleet.code, fleet.err).to.equal(0);
    expect(fleet.out.trim().split('\n').map((line) => line.trim().split(/\s{2,}/))).to.deep.equal([
      ['MODEL', 'GPUS', 'ALLOCATED', 'FREE', 'UNAVAILABLE', 'ALLOC %', 'NODES'],
      ['all', '28', '6.50', '9', '12.50', '42 %', '2/4'],
      ['NVIDIA-H100-80GB-HBM3', '24', '6', '9', '9', '40 %', '2/3'],
      ['NVIDIA-A10G', '4', '0.50', '0', '3.50', '100 %', '0/1'],
    ]);
    const nodes = await kubectl(['nodes', '--state', 'ready', '-o', 'json']);
    expect(JSON.parse(nodes.out).nodes).to.deep.equal((await t.get('/v1/fleet/nodes?state=ready')).body.data.nodes);
    const csv = await kubectl(['nodes', '-o', 'csv']);
    expect(csv.out.split(/\r?\n/)[0]).to.equal('cluster_id,node,gpu_model,instance_type,pool_id,state,gpu_sharing,total_gpus,allocated_gpus,unallocated_gpus,unavailable_gpus,unhealthy_gpus');
    const member = await kubectl(['nodes'], t.callers.member);
    expect([member.code, member.err]).to.satisfy(([code, err]: [number, string]) => code === 1 && err.includes('only an ORG_ADMIN'));
  });

  it('is FORBIDDEN to a TEAM_LEAD and a MEMBER, and shows another organization nothing', async () => {
    for (const as of [t.callers.lead, t.callers.member]) {
      for (const path of ['/v1/fleet', '/v1/fleet/nodes']) {
        const res = await t.get(path, { as });
        expect([res.status, res.body.error.code], path).to.deep.equal([403, 'FORBIDDEN']);
      }
    }
    const other = await t.get('/v1/fleet', { as: t.callers.otherOrgAdmin });
    expect(other.body.data.now).to.include({ total_gpus: 0, nodes: 0 });
  });

  it('moves a cordoned node\'s free GPUs to unavailable within seconds, and frees the share of a pod that ends', async () => {
    const node = sim.api.store.get('nodes', { name: 'gpu-a' }) as KubeObject;
    sim.api.store.update('nodes', { ...node, spec: { unschedulable: true } });
    const cordoned = await waitFor(async () => {
      const now = (await t.get('/v1/fleet')).body.data.now;
      return now.unavailable_gpus === 16.5 ? now : undefined;
    }, { what: 'gpu-a cordoned', timeoutMs: 10_000 });
    // Its pod keeps its 4 GPUs allocated while it drains.
    expect(cordoned).to.include({ allocated_gpus: 6.5, unallocated_gpus: 5, nodes_unavailable: 3 });

    sim.api.store.patchStatus('pods', { namespace: NAMESPACE, name: 'train' }, finished(startedAt, Date.now(), 0));
    const freed = await waitFor(async () => {
      const now = (await t.get('/v1/fleet')).body.data.now;
      return now.allocated_gpus === 2.5 ? now : undefined;
    }, { what: 'train\'s GPUs freed', timeoutMs: 10_000 });
    expect(freed).to.include({ total_gpus: 28, unavailable_gpus: 20.5, unallocated_gpus: 5 });
  });
});
