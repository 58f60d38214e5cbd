// The demo's prices (docs/capacity.md, "Prices"): acme's GPU-hour rates for every GPU model its nodes
// have, spot cheaper than on-demand, an H100 price cut on the 1st of the month the demo starts in, and
// an energy rate. The dates are computed from the demo's start, so the cut always lies in the past and,
// but on the last day or so of a month, inside the 30 days of history, which then pays both prices.
// globex and initech have no prices: their workloads answer without cost, as an organization without
// a prices ConfigMap does. Which nodes are spot is decided by the node's name, with no random draw, so
// the rest of the world stays as the seed makes it.
import type { KubeObject } from '../kube-api/resources.js';

export const PRICED_ORGANIZATION = 'acme';
export const PRICES_CURRENCY = 'USD';
export const PRICES_CONFIGMAP = `prices-${PRICED_ORGANIZATION}`;

/** Karpenter's label, with its values as Karpenter writes them: the service reads the capacity type from it. */
const CAPACITY_TYPE_LABEL = 'karpenter.sh/capacity-type';

/** The gpu_model each demo node produces: GFD's product without -SHARED (the time-sliced node's L40S), or the DRA productName dashed. */
const H100 = 'NVIDIA-H100-80GB-HBM3';
const L40S = 'NVIDIA-L40S';
const L4 = 'NVIDIA-L4';

/** Midnight UTC of the 1st of the month `now` is in. */
function firstOfMonth(now: number): Date {
  const date = new Date(now);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}

/** A whole UTC date as prices.yaml takes it (midnight UTC). */
const day = (date: Date): string => date.toISOString().slice(0, 10);

/** acme's prices.yaml for a demo started at `now`. */
export function demoPricesYaml(now: number): string {
  const cut = firstOfMonth(now);
  // A year before the cut: every rate is in force for the whole month of history before it.
  const since = new Date(Date.UTC(cut.getUTCFullYear() - 1, cut.getUTCMonth(), 1));
  return [
    `organization_id: ${PRICED_ORGANIZATION}`,
    `currency: ${PRICES_CURRENCY}`,
    'energy_rate_per_kwh: 0.14',
    'gpu_hour_rates:',
    // Nodes without a capacity-type label (the MIG, time-sliced and DRA nodes) pay the rates that name none.
    `  - { gpu_model: ${H100}, rate_per_gpu_hour: 4.10, effective_from: ${day(since)}, effective_to: ${day(cut)} }`,
    `  - { gpu_model: ${H100}, rate_per_gpu_hour: 3.60, effective_from: ${day(cut)} }   # the price cut on the 1st`,
    `  - { gpu_model: ${H100}, capacity_type: spot, rate_per_gpu_hour: 1.60, effective_from: ${day(since)} }`,
    `  - { gpu_model: ${L40S}, rate_per_gpu_hour: 1.10, effective_from: ${day(since)} }`,
    `  - { gpu_model: ${L40S}, capacity_type: spot, rate_per_gpu_hour: 0.45, effective_from: ${day(since)} }`,
    `  - { gpu_model: ${L4}, rate_per_gpu_hour: 0.80, effective_from: ${day(since)} }`,
    `  - { gpu_model: ${L4}, capacity_type: spot, rate_per_gpu_hour: 0.35, effective_from: ${day(since)} }`,
    '',
  ].join('\n');
}

/** acme's prices ConfigMap, in the service's namespace, for a demo started at `now`. */
export function demoPricesConfigMap(namespace: string, now: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: PRICES_CONFIGMAP, namespace, labels: { 'gpucap.io/prices': 'true' } },
    data: { 'prices.yaml': demoPricesYaml(now) },
  };
}

/** Every third node of a pool is spot (its name ends in 02, 05, 08, 11), the others on-demand. */
export function capacityTypeLabels(node: string): Record<string, string> {
  const number = Number(/(\d+)$/.exec(node)?.[1] ?? '0');
  return { [CAPACITY_TYPE_LABEL]: number % 3 === 2 ? 'spot' : 'on-demand' };
}
