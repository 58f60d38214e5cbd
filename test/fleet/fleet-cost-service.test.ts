// The fleet's history in money through the real service on the simulated API, its buckets one
// second: with a prices ConfigMap, GET /v1/fleet prices each node's GPU-hours at the rate of its kind
// (model, pool, capacity type from its labels), in the summary, the groups and the series, JSON and
// CSV; a node no rate matches is unpriced; and without prices the answers are byte for byte what
// they were. The rates are high (3,600 an hour: 1 a GPU-second) so seconds of history are money.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { capacityYaml } from '../support/capacity-yaml.js';
import { nodeFrom, podOn } from '../support/fleet-fixtures.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aNamespace, finished, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const NAMESPACE = 'gpu-system';
const HOUR = 3_600_000;
const H100 = 'NVIDIA-H100-80GB-HBM3';
const ON_DEMAND_RATE = 3600;
const SPOT_RATE = 1800;
const COST_FIELDS = ['capacity_cost', 'allocated_cost', 'idle_cost', 'unallocated_cost', 'unpriced_gpu_hours'] as const;
/** A figure of 4 decimals times a rate of 3,600, against the cost of its unrounded GPU-hours rounded to cents. */
const ROUNDING = 0.00005 * ON_DEMAND_RATE + 0.005;

const PRICES = `organization_id: acme
currency: USD
gpu_hour_rates:
  - gpu_model: ${H100}
    rate_per_gpu_hour: ${ON_DEMAND_RATE}
    effective_from: 2020-01-01
  - pool_id: h100
    capacity_type: spot
    rate_per_gpu_hour: ${SPOT_RATE}
    effective_from: 2020-01-01
`;

function configMap(name: string, label: string, key: string, text: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE, labels: { [label]: 'true' } }, data: { [key]: text } };
}

function labelled(node: KubeObject, labels: Record<string, string>): KubeObject {
  return { ...node, metadata: { ...node.metadata, labels: { ...node.metadata.labels, ...labels } } };
}

type Figures = JsonBody & { key?: string; capacity_gpu_hours: number; allocated_gpu_hours: number; unallocated_gpu_hours: number };

const sumOf = (entries: readonly Figures[], field: string): number => entries.reduce((total, entry) => total + (entry[field] as number), 0);

describe('the fleet\'s history in money, on the simulated API (GET /v1/fleet with prices)', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  let pod: { startedAt: number; finishedAt: number };
  const first = Math.floor(Date.now() / HOUR) * HOUR;
  // A range fixed in advance, so that an answer read twice is the same whatever hour it is read in.
  const range = `time_range=custom&start_date=${new Date(first - HOUR).toISOString()}&end_date=${new Date(first + 2 * HOUR).toISOString()}`;
  const PATHS = [`/v1/fleet?${range}&group_by=node&interval=hour`, `/v1/fleet?${range}&group_by=pool_id&interval=day`, `/v1/fleet?${range}`];
  let unpriced: { json: string[]; csv: string[] };

  const read = async () => ({
    // Every answer has its own request_id; the rest is compared byte for byte.
    json: await Promise.all(PATHS.map(async (path) => (await t.getText(path)).text.replace(/"request_id":"[^"]*"/, '"request_id":"…"'))),
    csv: await Promise.all(PATHS.map(async (path) => (await t.getText(path, { headers: { accept: 'text/csv' } })).text)),
  });

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    const store = sim.api.store;
    store.create('namespaces', aNamespace(NAMESPACE));
    store.create('namespaces', aNamespace('ml', { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' }));
    // Two H100 nodes of the h100 pool, 8 GPUs each, one on-demand and one spot; an A10G node, which no rate prices.
    store.create('nodes', labelled(nodeFrom('node-whole-h100.json', 'gpu-od', 'p5.48xlarge'), { 'karpenter.sh/capacity-type': 'on-demand' }));
    store.create('nodes', labelled(nodeFrom('node-whole-h100.json', 'gpu-spot', 'p5.48xlarge'), { 'karpenter.sh/capacity-type': 'spot' }));
    store.create('nodes', nodeFrom('node-time-slicing-a10g.json', 'gpu-a10g', 'g5.12xlarge'));
    store.create('configmaps', configMap('capacity-acme', 'gpucap.io/capacity', 'capacity.yaml', capacityYaml()));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        GPUCAP_NAMESPACE: NAMESPACE, GPUCAP_CLUSTER_ID: 'gpu-east', GPUCAP_CLUSTER_ORGANIZATION_ID: 'acme',
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20', GPUCAP_FLEET_HISTORY_RESOLUTION_SECONDS: '1', GPUCAP_FLEET_HISTORY_FLUSH_SECONDS: '1',
      },
    });
    await waitFor(async () => ((await t.get(`/v1/fleet?${range}`)).body.data?.summary?.capacity_gpu_hours > 0 ? true : undefined), {
      what: 'the first seconds of the fleet in its history', timeoutMs: 15_000,
    });
    // A pod of 4 GPUs on the on-demand node for about 4 seconds.
    const startedAt = Date.now();
    store.create('pods', podOn('ml', 'train', 'gpu-od', { 'nvidia.com/gpu': '4' }, running(startedAt)));
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.now?.allocated_gpus === 4 ? true : undefined), {
      what: 'the pod\'s GPUs allocated', timeoutMs: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const finishedAt = Date.now();
    store.patchStatus('pods', { namespace: 'ml', name: 'train' }, finished(startedAt, finishedAt, 0));
    pod = { startedAt, finishedAt };
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.now?.allocated_gpus === 0 ? true : undefined), {
      what: 'the pod\'s GPUs free again', timeoutMs: 10_000,
    });
    // The nodes go, so that the history stops growing and an answer read twice is the same.
    for (const name of ['gpu-od', 'gpu-spot', 'gpu-a10g']) store.delete('nodes', { name });
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.now?.nodes === 0 ? true : undefined), {
      what: 'the nodes gone', timeoutMs: 10_000,
    });
    // The history runs a bucket and a flush behind.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    unpriced = await read();
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  const withPrices = async () => {
    sim.api.store.create('configmaps', configMap('prices-acme', 'gpucap.io/prices', 'prices.yaml', PRICES));
    await waitFor(async () => ((await t.get(`/v1/fleet?${range}`)).body.data?.currency === 'USD' ? true : undefined), {
      what: 'the prices in force', timeoutMs: 10_000,
    });
  };

  it('has no currency and no cost field without prices', () => {
    for (const text of unpriced.json) expect(text).to.not.match(/_cost|currency|unpriced/);
    for (const text of unpriced.csv) expect(text.split(/\r?\n/)[0]).to.not.match(/_cost|currency|unpriced/);
  });

  it('prices each node at the rate of its kind: the on-demand H100s, the spot ones of the pool, the A10Gs unpriced', async () => {
    await withPrices();
    const data = (await t.get(PATHS[0] as string)).body.data as { currency: string; summary: Figures; grouped: Figures[] };
    expect(data.currency).to.equal('USD');
    expect(Object.keys(data)[0]).to.equal('currency');
    const node = (name: string) => data.grouped.find((group) => group.key === `gpu-east/${name}`) as Figures;
    const [od, spot, a10g] = [node('gpu-od'), node('gpu-spot'), node('gpu-a10g')];
    // The two H100 nodes were there for the same seconds.
    expect(od.capacity_gpu_hours).to.be.greaterThan(0);
    expect(spot.capacity_gpu_hours).to.be.closeTo(od.capacity_gpu_hours, 0.0002);
    expect(od.capacity_cost).to.be.closeTo(od.capacity_gpu_hours * ON_DEMAND_RATE, ROUNDING);
    expect(od.unallocated_cost).to.be.closeTo(od.unallocated_gpu_hours * ON_DEMAND_RATE, ROUNDING);
    expect(spot.capacity_cost).to.be.closeTo(spot.capacity_gpu_hours * SPOT_RATE, ROUNDING);
    expect(spot).to.include({ allocated_cost: 0, idle_cost: 0, unpriced_gpu_hours: 0 });
    expect(od).to.include({ idle_cost: 0, unpriced_gpu_hours: 0 });
    // The pod's 4 GPUs for its seconds, at 1 a GPU-second, to when the service saw it start and end.
    const podSeconds = (pod.finishedAt - pod.startedAt) / 1000;
    expect(od.allocated_cost).to.be.closeTo(4 * podSeconds, 4 * 0.5);
    expect(od.allocated_cost).to.be.closeTo(od.allocated_gpu_hours * ON_DEMAND_RATE, ROUNDING);
    expect(a10g).to.include({ capacity_cost: 0, allocated_cost: 0, idle_cost: 0, unallocated_cost: 0 });
    expect(a10g.unpriced_gpu_hours).to.equal(a10g.capacity_gpu_hours);
    expect(data.summary.unpriced_gpu_hours).to.equal(a10g.capacity_gpu_hours);
    for (const field of COST_FIELDS) {
      expect(data.summary[field], field).to.be.closeTo(sumOf(data.grouped, field), 0.015);
    }
  });

  it('costs the pools and every entry of the series, which add up to the summary', async () => {
    const data = (await t.get(PATHS[1] as string)).body.data as { summary: Figures; grouped: Figures[]; series: (Figures & { grouped?: Figures[] })[] };
    expect(data.grouped.map((group) => group.key).sort()).to.deep.equal(['', 'h100']);
    const pool = data.grouped.find((group) => group.key === 'h100') as Figures;
    expect(pool.capacity_cost).to.be.closeTo(data.summary.capacity_cost as number, 0.005);
    for (const field of COST_FIELDS) {
      expect(sumOf(data.series, field), field).to.be.closeTo(data.summary[field] as number, 0.015);
      for (const entry of data.series) expect(sumOf(entry.grouped ?? [], field), field).to.be.closeTo(entry[field] as number, 0.015);
    }
  });

  it('answers the costs in CSV too, with the currency on every record', async () => {
    const csv = await t.getText(PATHS[2] as string, { headers: { accept: 'text/csv' } });
    const [header, fleet] = csv.text.trim().split(/\r?\n/).map((line) => line.split(','));
    const json = (await t.get(PATHS[2] as string)).body.data.summary as Figures;
    expect(header?.slice(-6)).to.deep.equal(['currency', ...COST_FIELDS]);
    expect(fleet?.slice(-6)).to.deep.equal(['USD', ...COST_FIELDS.map((field) => String(json[field]))]);
  });

  it('answers byte for byte what it answered before, once the prices are gone', async () => {
    sim.api.store.delete('configmaps', { namespace: NAMESPACE, name: 'prices-acme' });
    await waitFor(async () => ((await t.get(`/v1/fleet?${range}`)).body.data?.currency === undefined ? true : undefined), {
      what: 'the prices gone', timeoutMs: 10_000,
    });
    expect(await read()).to.deep.equal(unpriced);
  });
});
