// The service watching a simulated cluster of acme's, for the plugin's tests of what prices add: GPU
// nodes of a model, the teams' namespaces, pods that ran when the test says, and acme's prices
// ConfigMap, which a test creates when it wants prices, as an operator would. And the plugin run
// against that service, with the caller's token from the environment as a user sets it.
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import { run } from '../../../src/cli/kubectl/run.js';
import { startTestService, type TestService } from '../../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aGpuPod, aNamespace, finished, startSimCluster, type SimCluster } from '../../support/sim-cluster.js';

export const H100 = 'NVIDIA-H100-80GB-HBM3';
export const L40S = 'NVIDIA-L40S';
const NAMESPACE = 'gpu-system';
const PRICES = { name: 'prices-acme', namespace: NAMESPACE };

/** A pod that ran on `node` from `startedAt` to `finishedAt` and succeeded, in its team's namespace. */
export interface FinishedPod {
  team: string;
  name: string;
  node: string;
  gpus: number;
  startedAt: number;
  finishedAt: number;
  submittedBy?: string;
}

/** A GPU-hour rate of prices.yaml: in force from `from` (else since 2020) until `to` (else for good). */
export interface Rate {
  model: string;
  rate: number;
  from?: number;
  to?: number;
}

/** acme's prices.yaml in `currency`, with these GPU-hour rates and no energy rate. */
export function acmePrices(currency: string, rates: readonly Rate[]): string {
  const instant = (at: number) => `"${new Date(at).toISOString()}"`;
  const rate = (r: Rate) => `  - { gpu_model: ${r.model}, rate_per_gpu_hour: ${r.rate}, effective_from: ${r.from === undefined ? '2020-01-01' : instant(r.from)}` +
    `${r.to === undefined ? '' : `, effective_to: ${instant(r.to)}`} }`;
  return ['organization_id: acme', `currency: ${currency}`, 'gpu_hour_rates:', ...rates.map(rate), ''].join('\n');
}

export interface PricedCluster {
  sim: SimCluster;
  service: TestService;
  /** Creates acme's prices ConfigMap with this prices.yaml, or replaces its text. */
  setPrices(yaml: string): void;
  close(): Promise<void>;
}

/** `nodes`: each node's name and its GPU product (GPU Feature Discovery's label). */
export async function startPricedCluster(
  dir: string,
  world: { nodes: Record<string, string>; teams: readonly string[]; pods: readonly FinishedPod[] },
): Promise<PricedCluster> {
  const sim = await startSimCluster(dir, 'gpu-east');
  const store = sim.api.store;
  store.create('namespaces', aNamespace(NAMESPACE));
  for (const team of world.teams) store.create('namespaces', aNamespace(team, { 'gpucap.io/organization': 'acme' }));
  for (const [name, product] of Object.entries(world.nodes)) {
    const base = aGpuNode(name, 'p5.48xlarge');
    store.create('nodes', { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels, 'nvidia.com/gpu.product': product } } });
  }
  for (const pod of world.pods) {
    const labels: Record<string, string> = pod.submittedBy === undefined ? {} : { 'gpucap.io/submitted-by': pod.submittedBy };
    const shape = aGpuPod(pod.team, pod.name, { gpus: pod.gpus, node: pod.node, labels });
    // Submitted a minute before it started, as if it had been scheduled then.
    const submittedAt = new Date(pod.startedAt - 60_000).toISOString();
    const created = store.create('pods', { ...shape, metadata: { ...shape.metadata, creationTimestamp: submittedAt } });
    store.patchStatus('pods', created.metadata, finished(pod.startedAt, pod.finishedAt, 0));
  }
  const service = await startTestService({
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
  const setPrices = (yaml: string) => {
    const existing = store.get('configmaps', PRICES) as KubeObject | undefined;
    if (existing !== undefined) {
      store.update('configmaps', { ...existing, data: { 'prices.yaml': yaml } });
      return;
    }
    store.create('configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...PRICES, labels: { 'gpucap.io/prices': 'true' } }, data: { 'prices.yaml': yaml },
    });
  };
  return {
    sim,
    service,
    setPrices,
    close: async () => {
      await service.stop();
      await sim.close();
    },
  };
}

export interface PluginRun {
  code: number;
  out: string;
  err: string;
}

/** kubectl gpucap `args` against `service` (--url), as the caller of `token` (GPUCAP_TOKEN, GPUCAP_ORG acme). */
export async function runPlugin(service: TestService, args: readonly string[], options: { token: string; home: string }): Promise<PluginRun> {
  let out = '';
  let err = '';
  const code = await run([...args, '--url', service.url], {
    env: { HOME: options.home, GPUCAP_TOKEN: options.token, GPUCAP_ORG: 'acme' },
    out: (text) => (out += text),
    err: (text) => (err += text),
    now: () => Date.now(),
    connect: () => Promise.reject(new Error('no kubeconfig in this test')),
  });
  return { code, out, err };
}
