// kubectl gpucap workload ID with and without prices (docs/api.md, "Cost"), against the real service
// watching a simulated cluster, whose prices ConfigMap is created as an operator would: without it the
// table has no cost line; with it, cost in the currency split across a price change, "unpriced" for GPU
// time no rate matched, and the unpriced GPU-hours.
import { expect } from 'chai';
import { run } from '../../../src/cli/kubectl/run.js';
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import { startTestService, type TestService } from '../../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aGpuPod, aNamespace, finished, startSimCluster, type SimCluster } from '../../support/sim-cluster.js';
import { makeTempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait-for.js';

const NAMESPACE = 'gpu-system';
const HOUR = 3_600_000;
const COST_FIELDS = ['currency', 'cost', 'energy_cost', 'unpriced_gpu_hours'];

/** H100s at 4 EUR a GPU-hour until `change`, 3 after; no rate for L40S; energy not priced. */
function pricesConfigMap(change: number): KubeObject {
  const at = new Date(change).toISOString();
  const text = [
    'organization_id: acme',
    'currency: EUR',
    'gpu_hour_rates:',
    `  - { gpu_model: NVIDIA-H100-80GB-HBM3, rate_per_gpu_hour: 4, effective_from: 2020-01-01, effective_to: "${at}" }`,
    `  - { gpu_model: NVIDIA-H100-80GB-HBM3, rate_per_gpu_hour: 3, effective_from: "${at}" }`,
    '',
  ].join('\n');
  return {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'prices-acme', namespace: NAMESPACE, labels: { 'gpucap.io/prices': 'true' } },
    data: { 'prices.yaml': text },
  };
}

describe('kubectl gpucap workload: the cost lines', function () {
  this.timeout(30_000);
  const temp = makeTempDir('gpucap-cli-cost-');
  let sim: SimCluster;
  let t: TestService;
  // Whole hours in the past: each pod held 2 GPUs for an hour before the change and an hour after it (4 GPU-hours).
  const change = Math.floor(Date.now() / HOUR) * HOUR - HOUR;

  const node = (name: string, product: string): KubeObject => {
    const base = aGpuNode(name, 'p5.48xlarge');
    return { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels, 'nvidia.com/gpu.product': product } } };
  };

  before(async () => {
    sim = await startSimCluster(temp.path, 'gpu-east');
    const store = sim.api.store;
    store.create('namespaces', aNamespace(NAMESPACE));
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('nodes', node('h100', 'NVIDIA-H100-80GB-HBM3'));
    store.create('nodes', node('l40s', 'NVIDIA-L40S'));
    for (const [name, host] of [['train-h100', 'h100'], ['train-l40s', 'l40s']] as const) {
      const pod = store.create('pods', aGpuPod('llm', name, { gpus: 2, node: host }));
      store.patchStatus('pods', pod.metadata, finished(change - HOUR, change + HOUR, 0));
    }
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        // The prices are operators' ConfigMaps, read only where the budgets' are.
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_NAMESPACE: NAMESPACE,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp.remove();
  });

  const idOf = (name: string) =>
    waitFor(async () => {
      const list = await t.get('/v1/workloads?limit=100');
      return (list.body?.data?.workloads as { workload_id: string; name: string }[] | undefined)?.find((w) => w.name === name)?.workload_id;
    }, { what: `workload ${name}`, timeoutMs: 10_000 });

  /** The table's lines of `kubectl gpucap workload ID`, field to value. */
  const shown = async (id: string): Promise<Record<string, string>> => {
    let out = '';
    let err = '';
    const code = await run(['workload', id, '--url', t.url], {
      env: { HOME: temp.path, GPUCAP_TOKEN: t.callers.admin.token, GPUCAP_ORG: 'acme' },
      out: (text) => (out += text),
      err: (text) => (err += text),
      now: () => Date.now(),
      connect: () => Promise.reject(new Error('no kubeconfig in this test')),
    });
    expect(code, err).to.equal(0);
    return Object.fromEntries(out.trimEnd().split('\n').slice(1).map((line) => /^(\S+)\s+(.*)$/.exec(line)?.slice(1, 3) ?? [line, '']));
  };

  it('prints no cost line without prices', async () => {
    for (const name of ['train-h100', 'train-l40s']) {
      const lines = await shown(await idOf(name));
      expect(lines).to.have.property('gpu_hours_used', '4.0 GPU-h');
      expect(lines, name).to.not.have.any.keys(...COST_FIELDS);
    }
  });

  it('prints the cost in the currency, "unpriced" where no rate matched, and the unpriced GPU-hours', async () => {
    sim.api.store.create('configmaps', pricesConfigMap(change));
    const [h100, l40s] = [await idOf('train-h100'), await idOf('train-l40s')];
    await waitFor(async () => ((await t.get(`/v1/workloads/${h100}`)).body?.data.cost === undefined ? undefined : true), { what: 'the prices in force', timeoutMs: 10_000 });
    // 2 GPUs for an hour at 4, then an hour at 3.
    expect(await shown(h100)).to.include({ currency: 'EUR', cost: '14.00 EUR', energy_cost: '-', unpriced_gpu_hours: '0.0 GPU-h' });
    expect(await shown(l40s)).to.include({ currency: 'EUR', cost: 'unpriced', energy_cost: '-', unpriced_gpu_hours: '4.0 GPU-h' });
  });
});
