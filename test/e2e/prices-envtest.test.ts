// Prices against a real kube-apiserver (envtest, v1.20), watched as gpucap-reader with only the chart's
// ClusterRole and Role. An operator creates a prices ConfigMap whose H100 rate changes at the start of
// the last hour, with a cheaper spot rate: each workload's cost must be its hours × the rate in force,
// split at the change, by the capacity type of its node; a broken edit keeps the last valid prices and
// is reported; without prices the record is byte for byte what it was.
import { expect } from 'chai';
import type { V1ConfigMap, V1Node } from '@kubernetes/client-node';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { AdminClient } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { forCreate, gpuPod, runningStatus, terminatedStatus } from '../support/envtest/objects.js';
import { nodeFrom } from '../support/fleet-fixtures.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { waitFor } from '../support/wait-for.js';

const NAMESPACE = 'ml';
const SERVICE_NAMESPACE = 'gpucap-system';
const H100 = 'NVIDIA-H100-80GB-HBM3';
const MERGE = 'application/merge-patch+json';
const HOUR = 3_600_000;
const INFORMERS = { tuning: { backoff: { baseMs: 100, maxMs: 1000 }, stallTimeoutMs: 120_000 }, dependencyWaitMs: 2_000 };
const PRICES = `/api/v1/namespaces/${SERVICE_NAMESPACE}/configmaps/prices-acme`;

/** H100s at 4 an hour until `change`, then 3; spot H100s at `spot` from `change` (4 before it, as on-demand). */
function pricesYaml(change: number, spot = 1): string {
  const at = new Date(change).toISOString();
  return `organization_id: acme
currency: USD
energy_rate_per_kwh: 0.2
gpu_hour_rates:
  - gpu_model: ${H100}
    rate_per_gpu_hour: 4
    effective_from: 2020-01-01
    effective_to: "${at}"
  - gpu_model: ${H100}
    rate_per_gpu_hour: 3
    effective_from: "${at}"
  - gpu_model: ${H100}
    capacity_type: spot
    rate_per_gpu_hour: ${spot}
    effective_from: "${at}"
`;
}

function pricesConfigMap(text: string): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'prices-acme', labels: { 'gpucap.io/prices': 'true' } }, data: { 'prices.yaml': text } };
}

describe('Prices against a real kube-apiserver (envtest v1.20), watched as gpucap-reader', function () {
  this.timeout(30_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let t: TestService | undefined;
  // The rate changes at the start of the last hour. `across` ran 30 minutes either side of it.
  const change = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const startedAt = change - HOUR;
  const ids = new Map<string, string>();
  let unpricedText = '';

  function service(): TestService {
    if (t === undefined) throw new Error('The service is not running');
    return t;
  }

  async function registerNode(name: string, capacityType: string): Promise<void> {
    const node = nodeFrom('node-whole-h100.json', name, 'p5.48xlarge') as V1Node;
    node.metadata = { ...node.metadata, labels: { ...node.metadata?.labels, 'karpenter.sh/capacity-type': capacityType } };
    await admin.call('POST', '/api/v1/nodes', forCreate(node));
    await admin.call('PATCH', `/api/v1/nodes/${name}/status`, { status: node.status }, MERGE);
  }

  const record = async (name: string): Promise<JsonBody> => {
    const response = await service().get(`/v1/workloads/${ids.get(name) ?? ''}`);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.data;
  };
  const rejected = async () => sumOf(parseMetrics(await (await fetch(`${service().adminUrl}/metrics`)).text()), 'gpucap_prices_configmap_rejected', {});

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    await admin.bindChartRulesToReader();
    await admin.createNamespace(SERVICE_NAMESPACE);
    await admin.bindChartRoleToReader(SERVICE_NAMESPACE);
    await admin.createNamespace(NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' });
    await registerNode('gpu-od', 'on-demand');
    await registerNode('gpu-spot', 'spot');
    await admin.createPod(NAMESPACE, gpuPod('train', { node: 'gpu-od', gpus: 2 }));
    await admin.patchPodStatus(NAMESPACE, 'train', runningStatus(startedAt));
    await admin.createPod(NAMESPACE, gpuPod('sweep', { node: 'gpu-spot', gpus: 4 }));
    await admin.patchPodStatus(NAMESPACE, 'sweep', runningStatus(startedAt));
    await admin.createPod(NAMESPACE, gpuPod('across', { node: 'gpu-od', gpus: 1 }));
    await admin.patchPodStatus(NAMESPACE, 'across', terminatedStatus(change - HOUR / 2, change + HOUR / 2, 0));

    t = await startTestService({
      clock: 'system',
      informers: INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: envtest.readerKubeconfig,
        GPUCAP_CLUSTER_ID: 'envtest',
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_NAMESPACE: SERVICE_NAMESPACE,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
    await waitFor(async () => (await service().readyz()).status === 200, { timeoutMs: 30_000, what: 'the service\'s /readyz to answer 200' });
    await waitFor(async () => {
      const list = await service().get('/v1/workloads?limit=100');
      for (const w of list.body.data.workloads as { workload_id: string; name: string }[]) ids.set(w.name, w.workload_id);
      return ids.size === 3 ? true : undefined;
    }, { timeoutMs: 15_000, what: 'the three workloads indexed' });
    unpricedText = (await service().getText(`/v1/workloads/${ids.get('across') ?? ''}`)).text;
  });

  after(async () => {
    await t?.stop();
    await envtest?.stop();
  });

  it('has no cost without prices', async () => {
    expect(JSON.parse(unpricedText).data).to.not.have.any.keys('cost', 'energy_cost', 'currency', 'unpriced_gpu_hours');
  });

  it('prices each workload\'s hours at the rate in force, split across the change, by its node\'s capacity type', async () => {
    await admin.createConfigMap(SERVICE_NAMESPACE, pricesConfigMap(pricesYaml(change)));
    const across = await waitFor(async () => {
      const w = await record('across');
      return w.cost === undefined ? undefined : w;
    }, { timeoutMs: 10_000, what: 'the prices applied' });
    // 1 GPU, half an hour at 4 and half an hour at 3.
    expect(across).to.include({ currency: 'USD', cost: 3.5, energy_cost: null, unpriced_gpu_hours: 0, gpu_hours_used: 1 });
    const train = await record('train');
    expect(train.cost).to.be.closeTo(2 * 4 + (train.gpu_hours_used - 2) * 3, 0.02);
    const sweep = await record('sweep');
    expect(sweep.cost).to.be.closeTo(4 * 4 + (sweep.gpu_hours_used - 4) * 1, 0.02);
  });

  it('keeps the last valid prices when an edit is broken, and reports it', async () => {
    await admin.call('PATCH', PRICES, { data: { 'prices.yaml': pricesYaml(change + 60_000) } }, MERGE);
    await waitFor(async () => ((await rejected()) === 1 ? true : undefined), { timeoutMs: 10_000, what: 'the rejection on /metrics' });
    const failure = async () => ((await service().readyz()).body as { conditions: Record<string, { failure: string | null }> }).conditions.capacity?.failure;
    await waitFor(async () => ((await failure()) === '1 prices ConfigMap(s) rejected' ? true : undefined), { timeoutMs: 5_000, what: 'the rejection on /readyz' });
    expect(await record('across')).to.include({ cost: 3.5 });
  });

  it('re-prices the past at once when a rate is corrected, and answers byte for byte as before once the prices are deleted', async () => {
    await admin.call('PATCH', PRICES, { data: { 'prices.yaml': pricesYaml(change, 0.5) } }, MERGE);
    const sweep = await waitFor(async () => {
      const w = await record('sweep');
      return Math.abs(w.cost - (4 * 4 + (w.gpu_hours_used - 4) * 0.5)) < 0.02 ? w : undefined;
    }, { timeoutMs: 10_000, what: 'the corrected spot rate' });
    expect(sweep.currency).to.equal('USD');
    expect(await rejected()).to.equal(0);
    await admin.call('DELETE', PRICES);
    const text = await waitFor(async () => {
      const body = (await service().getText(`/v1/workloads/${ids.get('across') ?? ''}`)).text;
      return body.includes('"cost"') ? undefined : body;
    }, { timeoutMs: 10_000, what: 'the prices removed' });
    // Byte for byte, but for the request's own id.
    const withoutRequestId = (body: string) => body.replace(/"request_id":"[^"]*"/, '"request_id":""');
    expect(withoutRequestId(text)).to.equal(withoutRequestId(unpricedText));
  });
});
