// What a pod asks of GPUs, read from the pod alone: the devices of each GPU resource, and what a
// fractional scheduler says of their share. KAI Scheduler annotates a fraction pod (`gpu-fraction`,
// or `gpu-memory` in MiB, each on `gpu-fraction-num-devices` devices) and gives it no GPU resource at
// all; HAMi adds `nvidia.com/gpucores` (percent of each vGPU), `nvidia.com/gpumem` (MiB of each) or
// `nvidia.com/gpumem-percentage` beside `nvidia.com/gpu`. What the node behind it says (MIG profile,
// replicas, device memory) is added when the pod is mapped (pod-share.ts).
import { effectiveAmounts, gpuRequestsByResource, parseGpuQuantity, type Amounts } from '../objects/gpu-request.js';
import type { Container, Pod, PodSpec, StringMap } from '../objects/k8s-types.js';

/** KAI Scheduler's annotations on a fraction pod. */
export const KAI_ANNOTATIONS = Object.freeze({
  fraction: 'gpu-fraction',
  memory: 'gpu-memory',
  devices: 'gpu-fraction-num-devices',
});

/** HAMi's per-vGPU resources, beside the `nvidia.com/gpu` count of vGPUs. */
export const HAMI_RESOURCES = Object.freeze({
  cores: 'nvidia.com/gpucores',
  memory: 'nvidia.com/gpumem',
  memoryPercentage: 'nvidia.com/gpumem-percentage',
});

const HAMI_VGPUS = 'nvidia.com/gpu';

/** A KAI fraction: the share of each device (or its memory in MiB), on `devices` devices. */
export interface KaiAsk {
  fraction: number | null;
  memoryMiB: number | null;
  devices: number;
}

/** HAMi's vGPUs: the share they prove on their own, and those whose share is memory over the device's. */
export interface HamiAsk {
  /** The vGPUs of the pod. */
  vgpus: number;
  /** Whole-GPU equivalents from `gpucores` (or `gpumem-percentage`, or whole vGPUs without either). */
  share: number;
  /** MiB asked by the vGPUs sized by `gpumem` only, and how many those are. */
  memoryMiB: number;
  memoryVgpus: number;
}

export interface GpuAsk {
  /** GPU devices per GPU resource name, as the scheduler counts them. */
  readonly devices: ReadonlyMap<string, number>;
  readonly kai: KaiAsk | null;
  readonly hami: HamiAsk | null;
  /** The pod names DRA ResourceClaims: what they hold is known from the claims (src/k8s/gpus/dra-share.ts). */
  readonly dra: boolean;
}

/** A positive decimal from an annotation; null for anything else. */
function positiveNumber(value: string | undefined): number | null {
  if (value === undefined || !/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value)) return null;
  const number = Number(value);
  return number > 0 && Number.isFinite(number) ? number : null;
}

/** KAI's fraction annotations; null when the pod has none that is valid (a fraction is in (0, 1]). */
export function kaiAsk(annotations: StringMap | undefined): KaiAsk | null {
  if (annotations === undefined) return null;
  const fraction = positiveNumber(annotations[KAI_ANNOTATIONS.fraction]);
  const memoryMiB = positiveNumber(annotations[KAI_ANNOTATIONS.memory]);
  const validFraction = fraction !== null && fraction <= 1 ? fraction : null;
  if (validFraction === null && memoryMiB === null) return null;
  const devices = positiveNumber(annotations[KAI_ANNOTATIONS.devices]);
  return {
    fraction: validFraction,
    memoryMiB: validFraction === null ? memoryMiB : null,
    devices: devices !== null && Number.isInteger(devices) ? devices : 1,
  };
}

function quantity(container: Container, name: string): number {
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  return parseGpuQuantity(requests[name] ?? limits[name]);
}

/** One container's HAMi figures, keyed as HamiAsk's fields. */
function hamiOfContainer(container: Container): Amounts {
  const vgpus = quantity(container, HAMI_VGPUS);
  const amounts: Amounts = new Map([['vgpus', vgpus]]);
  if (vgpus === 0) return amounts;
  const cores = quantity(container, HAMI_RESOURCES.cores);
  const memory = quantity(container, HAMI_RESOURCES.memory);
  const percentage = quantity(container, HAMI_RESOURCES.memoryPercentage);
  if (cores > 0) amounts.set('share', (vgpus * Math.min(cores, 100)) / 100);
  else if (memory > 0) {
    amounts.set('memoryMiB', vgpus * memory);
    amounts.set('memoryVgpus', vgpus);
  } else if (percentage > 0) amounts.set('share', (vgpus * Math.min(percentage, 100)) / 100);
  else amounts.set('share', vgpus);
  return amounts;
}

function hasHamiResource(spec: PodSpec | undefined): boolean {
  const names = Object.values(HAMI_RESOURCES);
  const containers = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  return containers.some((container) =>
    names.some((name) => quantity(container, name) > 0),
  );
}

/** HAMi's vGPU figures of a pod; null when no container names a HAMi resource. */
export function hamiAsk(spec: PodSpec | undefined): HamiAsk | null {
  if (!hasHamiResource(spec)) return null;
  const amounts = effectiveAmounts(spec, hamiOfContainer);
  const vgpus = amounts.get('vgpus') ?? 0;
  if (vgpus === 0) return null;
  return {
    vgpus,
    share: amounts.get('share') ?? 0,
    memoryMiB: amounts.get('memoryMiB') ?? 0,
    memoryVgpus: amounts.get('memoryVgpus') ?? 0,
  };
}

/** What a pod (or a Job's pod template) asks of GPUs. */
export function gpuAsk(pod: Pick<Pod, 'metadata' | 'spec'> | undefined, gpuResources?: readonly string[]): GpuAsk {
  return {
    devices: gpuRequestsByResource(pod?.spec, gpuResources),
    kai: kaiAsk(pod?.metadata?.annotations),
    hami: hamiAsk(pod?.spec),
    dra: (pod?.spec?.resourceClaims?.length ?? 0) > 0,
  };
}

/** Whether the ask may hold a GPU: a device, a KAI fraction that names none, or DRA claims that may hold some. */
export function asksForGpus(ask: GpuAsk): boolean {
  if (ask.kai !== null || ask.dra) return true;
  for (const count of ask.devices.values()) if (count > 0) return true;
  return false;
}

/** No GPU asked: the ask of every pod that is no GPU pod. */
export const NO_ASK: GpuAsk = Object.freeze({ devices: new Map<string, number>(), kai: null, hami: null, dra: false });

/**
 * The asks seen, each kept once: the pods of a cluster ask a handful of different things, and each
 * pod record holds the shared one.
 */
export class AskTable {
  readonly #asks = new Map<string, GpuAsk>();

  intern(ask: GpuAsk): GpuAsk {
    if (ask.kai === null && ask.hami === null && ask.devices.size === 0 && !ask.dra) return NO_ASK;
    const key = JSON.stringify([[...ask.devices], ask.kai, ask.hami, ask.dra]);
    const known = this.#asks.get(key);
    if (known !== undefined) return known;
    this.#asks.set(key, ask);
    return ask;
  }
}

/** The GPU devices an ask holds: KAI's devices for a fraction, else its devices over every resource. */
export function askedDevices(ask: GpuAsk): number {
  if (ask.kai !== null) return ask.kai.devices;
  let devices = 0;
  for (const count of ask.devices.values()) devices += count;
  return devices;
}
