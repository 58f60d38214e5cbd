// Prices from live ConfigMaps, through the whole service on the simulated API: a workload's cost
// across a price change, a broken edit that keeps the last valid prices in force and is reported,
// and the record without prices exactly as it was.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aGpuPod, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';
import { capacityYaml } from '../support/capacity-yaml.js';

const NAMESPACE = 'gpu-system';
const HOUR = 3_600_000;
const MODEL = 'NVIDIA-H100-80GB-HBM3';

function aPricesConfigMap(text: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'prices-acme', namespace: NAMESPACE, labels: { 'gpucap.io/prices': 'true' } },
    data: { 'prices.yaml': text },
  };
}

/** H100s at 4 an hour until `change`, 3 after; spot H100s at 1 from `change`; energy not priced. */
function pricesYaml(change: number, spotRate = 1): string {
  const at = new Date(change).toISOString();
  return `organization_id: acme
currency: EUR
gpu_hour_rates:
  - gpu_model: ${MODEL}
    rate_per_gpu_hour: 4
    effective_from: 2020-01-01
    effective_to: "${at}"
  - gpu_model: ${MODEL}
    rate_per_gpu_hour: 3
    effective_from: "${at}"
  - gpu_model: ${MODEL}
    capacity_type: spot
    rate_per_gpu_hour: ${spotRate}
    effective_from: "${at}"
`;
}

describe('prices from ConfigMaps, live: the cost of a workload', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  // The price changes at the start of the hour before this one; both pods started an hour before that.
  const change = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const startedAt = change - HOUR;
  let unpriced: { onDemand: JsonBody; spot: JsonBody };

  const node = (name: string, labels: Record<string, string>): KubeObject => {
    const base = aGpuNode(name, 'p5.48xlarge');
    return { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels, 'nvidia.com/gpu.product': MODEL, ...labels } } };
  };

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    const store = sim.api.store;
    store.create('namespaces', aNamespace(NAMESPACE));
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('nodes', node('h100-od', { 'karpenter.sh/capacity-type': 'on-demand' }));
    store.create('nodes', node('h100-spot', { 'karpenter.sh/capacity-type': 'spot' }));
    // acme's budget of period total, with 100 EUR for the llm team beside its GPU-hours.
    const budget = capacityYaml().replace('    allocated_gpu_hours: 300\n', '    allocated_gpu_hours: 300\n    allocated_cost: 100\n');
    store.create('configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'capacity-acme', namespace: NAMESPACE, labels: { 'gpucap.io/capacity': 'true' } },
      data: { 'capacity.yaml': budget },
    });
    for (const [name, host] of [['train-od', 'h100-od'], ['train-spot', 'h100-spot']] as const) {
      const pod = store.create('pods', aGpuPod('llm', name, { gpus: 2, node: host }));
      store.patchStatus('pods', pod.metadata, running(startedAt));
    }
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
    unpriced = { onDemand: await record('train-od'), spot: await record('train-spot') };
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  async function record(name: string): Promise<JsonBody> {
    const id = await waitFor(async () => {
      const list = await t.get('/v1/workloads?limit=100');
      return (list.body?.data?.workloads as { workload_id: string; name: string }[] | undefined)?.find((w) => w.name === name)?.workload_id;
    }, { what: `workload ${name}`, timeoutMs: 10_000 });
    return (await t.get(`/v1/workloads/${id}`)).body?.data as JsonBody;
  }

  const untilCost = (name: string, test: (w: JsonBody) => boolean) =>
    waitFor(async () => {
      const w = await record(name);
      return test(w) ? w : undefined;
    }, { what: `the cost of ${name}`, timeoutMs: 10_000 });
  const rejected = async () => sumOf(parseMetrics(await (await fetch(`${t.adminUrl}/metrics`)).text()), 'gpucap_prices_configmap_rejected', {});
  const readyz = async () => (await (await fetch(`${t.adminUrl}/readyz`)).json()) as { conditions: Record<string, { failure: string | null }> };

  /** What 2 GPUs since `startedAt` cost, read at `gpuHours` of the record: 1 h before the change at `early`, the rest at `late`. */
  const expected = (w: JsonBody, early: number, late: number) => early * 2 + late * (w.gpu_hours_used - 2);

  it('has no cost field without prices', async () => {
    for (const w of [unpriced.onDemand, unpriced.spot]) {
      expect(w).to.not.have.any.keys('cost', 'energy_cost', 'currency', 'unpriced_gpu_hours');
    }
    for (const path of ['/v1/capacity', '/v1/workloads/stats?group_by=instance_type&interval=day']) {
      expect(JSON.stringify((await t.get(path)).body.data), path).to.not.match(/_cost|currency|unpriced/);
    }
    const ranking = await t.get('/v1/workloads/metrics?sort_by=cost');
    expect(ranking.status).to.equal(400);
    expect(ranking.body.error.details[0]).to.include({ field: 'sort_by' });
    expect(ranking.body.error.details[0].message).to.match(/cost needs prices/);
  });

  it('prices each pod\'s hours at the rate in force while it ran, split across a change, by capacity type', async () => {
    sim.api.store.create('configmaps', aPricesConfigMap(pricesYaml(change)));
    const onDemand = await untilCost('train-od', (w) => w.cost !== undefined);
    expect(onDemand).to.include({ currency: 'EUR', energy_cost: null, unpriced_gpu_hours: 0 });
    expect(onDemand.cost).to.be.closeTo(expected(onDemand, 4, 3), 0.02);
    const spot = await record('train-spot');
    expect(spot.cost).to.be.closeTo(expected(spot, 4, 1), 0.02);
    // Everything else about the record is what it was.
    const costKeys = ['currency', 'cost', 'energy_cost', 'unpriced_gpu_hours'];
    expect(Object.keys(onDemand).filter((key) => !costKeys.includes(key))).to.deep.equal(Object.keys(unpriced.onDemand));
  });

  it('costs the budgets: used_cost is the cost of the GPU time counted in used, remaining_cost against allocated_cost', async () => {
    const [onDemand, spot, capacity] = [await record('train-od'), await record('train-spot'), (await t.get('/v1/capacity')).body.data];
    const used = onDemand.cost + spot.cost;
    expect(capacity.currency).to.equal('EUR');
    expect(capacity.summary.total_used_cost).to.be.closeTo(used, 0.05);
    expect(capacity.summary).to.include({ total_allocated_cost: null, total_remaining_cost: null, unpriced_gpu_hours: 0 });
    expect(capacity.summary.burn_rate_cost_per_day).to.be.closeTo(used / 7, 0.05);
    const [llm] = capacity.initiatives;
    expect(llm).to.include({ initiative_id: 'llm', allocated_cost: 100 });
    expect(llm.remaining_cost).to.be.closeTo(100 - used, 0.05);
    expect(capacity.pools[0].used_cost).to.be.closeTo(used, 0.05);
    expect(capacity.pools[0].allocated_cost).to.equal(null);
    const csv = (await t.getText('/v1/capacity', { headers: { accept: 'text/csv' } })).text.trim().split(/\r?\n/);
    const header = (csv[0] as string).split(',');
    const initiative = (csv.find((line) => line.startsWith('initiative,llm')) as string).split(',');
    expect(initiative[header.indexOf('currency')]).to.equal('EUR');
    expect(Number(initiative[header.indexOf('allocated_cost')])).to.equal(100);
    expect(Number(initiative[header.indexOf('remaining_cost')])).to.equal(llm.remaining_cost);
  });

  it('costs the statistics: the summary, each group and each series entry, which add up', async () => {
    const [onDemand, spot] = [await record('train-od'), await record('train-spot')];
    const stats = (await t.get('/v1/workloads/stats?group_by=instance_type&interval=day')).body.data;
    expect(stats.currency).to.equal('EUR');
    expect(stats.summary.total_cost).to.be.closeTo(onDemand.cost + spot.cost, 0.05);
    expect(stats.summary).to.include({ total_idle_cost: null, unpriced_gpu_hours: 0 });
    const [group] = stats.grouped;
    expect(group).to.include({ instance_type: 'p5.48xlarge', idle_cost: null, unpriced_gpu_hours: 0 });
    expect(group.cost).to.be.closeTo(stats.summary.total_cost, 0.011);
    const seriesCost = stats.series.reduce((sum: number, entry: JsonBody) => sum + entry.cost, 0);
    expect(seriesCost).to.be.closeTo(stats.summary.total_cost, 0.011);
    const csv = (await t.getText('/v1/workloads/stats?group_by=instance_type', { headers: { accept: 'text/csv' } })).text.trim().split(/\r?\n/);
    const header = (csv[0] as string).split(',');
    expect(header.slice(-4)).to.deep.equal(['currency', 'cost', 'idle_cost', 'unpriced_gpu_hours']);
    const summary = (csv[1] as string).split(',');
    expect(summary[header.indexOf('currency')]).to.equal('EUR');
    expect(Number(summary[header.indexOf('cost')])).to.equal(stats.summary.total_cost);
    // A day with no workload submitted costs nothing.
    const ungrouped = (await t.get('/v1/workloads/stats?interval=day')).body.data;
    expect(ungrouped.series.filter((entry: JsonBody) => entry.workload_count === 0).every((entry: JsonBody) => entry.cost === 0)).to.equal(true);
  });

  it('ranks workloads by cost, the spot one below the on-demand one', async () => {
    const [onDemand, spot] = [await record('train-od'), await record('train-spot')];
    const ranking = (await t.get('/v1/workloads/metrics?sort_by=cost&order=desc')).body;
    expect(ranking.data.currency).to.equal('EUR');
    expect(ranking.data.workloads.map((w: JsonBody) => w.name)).to.deep.equal(['train-od', 'train-spot']);
    expect(ranking.data.workloads[0].cost.total).to.be.closeTo(onDemand.cost, 0.02);
    expect(ranking.data.scope_average.cost).to.be.closeTo((onDemand.cost + spot.cost) / 2, 0.02);
    expect(ranking.metadata.total_count).to.equal(2);
  });

  it('gives each team\'s cost this month on /metrics, in its currency', async () => {
    const [onDemand, spot] = [await record('train-od'), await record('train-spot')];
    const labels = { organization_id: 'acme', initiative_id: 'llm', currency: 'EUR' };
    const cost = await waitFor(async () => {
      const value = sumOf(parseMetrics(await (await fetch(`${t.adminUrl}/metrics`)).text()), 'gpucap_team_cost', labels);
      return value > 0 ? value : undefined;
    }, { what: 'gpucap_team_cost', timeoutMs: 15_000 });
    // The month may have begun after the pods did: never more than their whole cost.
    const monthStart = Date.parse(`${new Date().toISOString().slice(0, 7)}-01T00:00:00Z`);
    if (monthStart <= startedAt) expect(cost).to.be.closeTo(onDemand.cost + spot.cost, 0.05);
    else expect(cost).to.be.at.most(onDemand.cost + spot.cost + 0.05);
  });

  it('keeps the last valid prices when an edit is broken, and reports it', async () => {
    const current = sim.api.store.get('configmaps', { namespace: NAMESPACE, name: 'prices-acme' }) as KubeObject;
    sim.api.store.update('configmaps', { ...current, data: { 'prices.yaml': pricesYaml(change + 60_000) } });
    await waitFor(async () => ((await rejected()) === 1 ? true : undefined), { what: 'the rejection on /metrics', timeoutMs: 10_000 });
    await waitFor(async () => ((await readyz()).conditions.capacity?.failure === '1 prices ConfigMap(s) rejected' ? true : undefined), {
      what: 'the rejection on /readyz', timeoutMs: 5_000,
    });
    const spot = await record('train-spot');
    expect(spot.cost).to.be.closeTo(expected(spot, 4, 1), 0.02);
  });

  it('re-prices the past when a rate changes, and drops every cost field when the prices go', async () => {
    const current = sim.api.store.get('configmaps', { namespace: NAMESPACE, name: 'prices-acme' }) as KubeObject;
    sim.api.store.update('configmaps', { ...current, data: { 'prices.yaml': pricesYaml(change, 0.5) } });
    const spot = await untilCost('train-spot', (w) => w.cost !== undefined && Math.abs(w.cost - expected(w, 4, 0.5)) < 0.02);
    expect(spot.currency).to.equal('EUR');
    expect(await rejected()).to.equal(0);
    sim.api.store.delete('configmaps', { namespace: NAMESPACE, name: 'prices-acme' });
    const gone = await untilCost('train-od', (w) => w.cost === undefined);
    expect(Object.keys(gone)).to.deep.equal(Object.keys(unpriced.onDemand));
  });
});
