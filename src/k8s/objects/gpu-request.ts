// How many GPUs a pod holds, counted as the scheduler counts resources (k8s resourcehelper.PodRequests):
// app containers and sidecars (init containers with restartPolicy Always) run together and add up;
// a plain init container runs alone, beside only the sidecars started before it; the pod needs the
// larger of the two. Computed per resource name, then summed over the GPU resources (a pod asking for
// one `nvidia.com/gpu` and one MIG slice holds two GPU devices).
import type { Container, PodSpec, Quantity } from './k8s-types.js';

/** Resource names counted as GPUs: exact names, or `prefix*` patterns. */
export const DEFAULT_GPU_RESOURCES: readonly string[] = Object.freeze(['nvidia.com/gpu', 'nvidia.com/gpu.shared', 'nvidia.com/mig-*']);

/** Whether a resource name is a GPU resource: equal to a name, or starting with a `prefix*` pattern's prefix. */
export function isGpuResource(name: string, gpuResources: readonly string[] = DEFAULT_GPU_RESOURCES): boolean {
  return gpuResources.some((pattern) =>
    pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern,
  );
}

/** An extended-resource quantity as an integer; anything that is not a whole non-negative number is 0. */
export function parseGpuQuantity(quantity: Quantity | undefined): number {
  if (quantity === undefined) return 0;
  if (typeof quantity === 'number') return Number.isInteger(quantity) && quantity > 0 ? quantity : 0;
  return /^\d+$/.test(quantity.trim()) ? Number(quantity.trim()) : 0;
}

/** Amounts per resource name (or any other key a caller sums by). */
export type Amounts = Map<string, number>;

/** A container's GPU amounts per resource name. Extended resources: the request defaults to the limit. */
function containerGpus(container: Container, gpuResources: readonly string[]): Amounts {
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  const amounts: Amounts = new Map();
  for (const name of new Set([...Object.keys(requests), ...Object.keys(limits)])) {
    if (!isGpuResource(name, gpuResources)) continue;
    const amount = parseGpuQuantity(requests[name] ?? limits[name]);
    if (amount > 0) amounts.set(name, amount);
  }
  return amounts;
}

function add(into: Amounts, from: Amounts): void {
  for (const [name, amount] of from) into.set(name, (into.get(name) ?? 0) + amount);
}

function maxInto(into: Amounts, from: Amounts): void {
  for (const [name, amount] of from) into.set(name, Math.max(into.get(name) ?? 0, amount));
}

/**
 * What a pod holds of each key, from what each container holds: max(largest init container beside
 * the sidecars started before it, app containers + sidecars), per key.
 */
export function effectiveAmounts(spec: PodSpec | undefined, perContainer: (container: Container) => Amounts): Amounts {
  const running: Amounts = new Map();
  for (const container of spec?.containers ?? []) add(running, perContainer(container));
  const sidecars: Amounts = new Map();
  const initPeak: Amounts = new Map();
  for (const container of spec?.initContainers ?? []) {
    const own = perContainer(container);
    if (container.restartPolicy === 'Always') {
      add(running, own);
      add(sidecars, own);
      maxInto(initPeak, sidecars);
    } else {
      const whileRunning: Amounts = new Map(sidecars);
      add(whileRunning, own);
      maxInto(initPeak, whileRunning);
    }
  }
  maxInto(running, initPeak);
  return running;
}

/** The GPU devices a pod holds per resource name (`nvidia.com/mig-1g.10gb` → 2). */
export function gpuRequestsByResource(spec: PodSpec | undefined, gpuResources: readonly string[] = DEFAULT_GPU_RESOURCES): Amounts {
  return effectiveAmounts(spec, (container) => containerGpus(container, gpuResources));
}

/** Effective GPU request of a pod: its devices summed over the GPU resources. */
export function effectiveGpuRequest(spec: PodSpec | undefined, gpuResources: readonly string[] = DEFAULT_GPU_RESOURCES): number {
  let total = 0;
  for (const amount of gpuRequestsByResource(spec, gpuResources).values()) total += amount;
  return total;
}
