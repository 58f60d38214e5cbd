// The physical GPUs of a node, counted once whatever sharing mode it runs (docs/fleet.md, "How a
// node's GPUs are counted"), and how many of them the device plugin marks unhealthy. The first rule
// that applies counts:
//   1. HAMi's device register (`hami.io/node-nvidia-register`): one entry per GPU, whatever its
//      `count` of vGPUs; an entry with `health: false` is unhealthy.
//   2. GFD's `nvidia.com/gpu.count`. With the `single` MIG strategy GFD counts MIG devices there (its
//      product names the profile), so the count is scaled by the profile's share of a GPU.
//   3. The GPU resources the kubelet reports, in whole-GPU equivalents: whole devices, replicas ÷
//      `<resource>.replicas`, MIG instances by their share (pod-share.ts reads the labels).
//   4. DRA: the `gpu` and `vfio` devices of the node's ResourceSlices, plus the GPUs that its `mig`
//      devices are made of (their `parentUUID`), each once.
// Unhealthy GPUs are the devices in capacity but not in allocatable, in the same equivalents.
import type { GpuSharing } from '../../domain/gpu-sharing.js';
import { isGpuResource, parseGpuQuantity } from '../objects/gpu-request.js';
import type { Node, ResourceList, StringMap } from '../objects/k8s-types.js';
import { NVIDIA_GPU_DRIVER, type DraDevice } from './dra-share.js';
import { migComputeSlices } from './mig-profile.js';
import { gpuModel, migDevice } from './node-gpus.js';
import { migShare, podGpuShare, type ShareSettings } from './pod-share.js';

/** HAMi's annotation listing the GPUs of a node it schedules vGPUs on. */
export const HAMI_NODE_REGISTER = 'hami.io/node-nvidia-register';

const GPU_COUNT_LABEL = 'nvidia.com/gpu.count';

/** What a node's device plugins report of its GPUs. */
export interface NodeGpus {
  /** Physical GPUs, in whole-GPU equivalents (a partly partitioned MIG GPU counts by the slices it offers). */
  gpus: number;
  /** Of those, the ones the device plugin took out of allocatable. */
  unhealthyGpus: number;
  /** GFD's product without its suffixes; null when the node does not say. */
  model: string | null;
  sharing: GpuSharing;
}

export const NO_GPUS: Readonly<NodeGpus> = Object.freeze({ gpus: 0, unhealthyGpus: 0, model: null, sharing: 'exclusive' });

/** The GPU resources of a resource list, as device counts. */
function gpuAmounts(list: ResourceList | undefined, gpuResources: readonly string[]): Map<string, number> {
  const amounts = new Map<string, number>();
  for (const [name, quantity] of Object.entries(list ?? {})) {
    if (!isGpuResource(name, gpuResources)) continue;
    const count = parseGpuQuantity(quantity);
    if (count > 0) amounts.set(name, count);
  }
  return amounts;
}

/** Whole-GPU equivalents of device counts on this node, with the sharing and model they show. */
function equivalents(devices: ReadonlyMap<string, number>, labels: StringMap, settings: ShareSettings) {
  return podGpuShare({ devices, kai: null, hami: null, dra: false }, labels, settings);
}

interface HamiGpu {
  health?: unknown;
}

/** HAMi's register: the GPUs it lists, and how many it reports unhealthy; null when absent or unreadable. */
function hamiGpus(annotations: StringMap | undefined): { gpus: number; unhealthy: number } | null {
  const text = annotations?.[HAMI_NODE_REGISTER];
  if (text === undefined || !text.trim().startsWith('[')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const entries = parsed.filter((entry): entry is HamiGpu => typeof entry === 'object' && entry !== null);
  return { gpus: entries.length, unhealthy: entries.filter((entry) => entry.health === false).length };
}

/** GFD's count of the node's GPUs, in physical GPUs; null when unlabelled. */
function gfdCount(labels: StringMap, settings: ShareSettings): number | null {
  const text = labels[GPU_COUNT_LABEL];
  if (text === undefined || !/^\d+$/.test(text.trim())) return null;
  const count = Number(text.trim());
  // The single MIG strategy: `nvidia.com/gpu` devices are MIG instances of one profile.
  const mig = migDevice(labels, 'nvidia.com/gpu');
  if (mig === null) return count;
  const slices = mig.labelledSlices ?? migComputeSlices(mig.profile) ?? 1;
  return count * migShare(slices, labels['nvidia.com/gpu.product'] ?? null, settings);
}

/** What the device plugins of `node` report of its GPUs (rules 1 to 3); NO_GPUS when none. */
export function devicePluginGpus(node: Node, gpuResources: readonly string[], settings: ShareSettings = {}): NodeGpus {
  const labels = node.metadata?.labels ?? {};
  const capacity = gpuAmounts(node.status?.capacity, gpuResources);
  const allocatable = gpuAmounts(node.status?.allocatable, gpuResources);
  const offered = equivalents(capacity, labels, settings);
  const model = offered.model ?? gpuModel(labels['nvidia.com/gpu.product'] ?? null);

  const hami = hamiGpus(node.metadata?.annotations);
  if (hami !== null && hami.gpus > 0) {
    return { gpus: hami.gpus, unhealthyGpus: hami.unhealthy, model, sharing: 'fractional' };
  }

  const missing = new Map<string, number>();
  for (const [name, count] of capacity) {
    // A resource the kubelet has not reported as allocatable yet counts as allocatable: only a
    // lower allocatable says the device plugin took devices out.
    const left = allocatable.get(name) ?? (node.status?.allocatable === undefined ? count : 0);
    if (count > left) missing.set(name, count - left);
  }
  const unhealthy = missing.size === 0 ? 0 : equivalents(missing, labels, settings).equivalents;
  const counted = gfdCount(labels, settings);
  const gpus = counted !== null && counted > 0 ? counted : offered.equivalents;
  if (gpus <= 0) return NO_GPUS;
  return { gpus, unhealthyGpus: Math.min(gpus, unhealthy), model, sharing: offered.devices === 0 ? 'exclusive' : offered.sharing };
}

/** The physical GPUs behind a node's DRA devices (rule 4): gpu and vfio devices, and the parents of mig ones. */
export function draGpus(devices: Iterable<DraDevice & { driver: string }>): NodeGpus {
  const whole = new Set<string>();
  const parents = new Set<string>();
  let unnamed = 0;
  let model: string | null = null;
  let mig = false;
  for (const device of devices) {
    if (device.driver !== NVIDIA_GPU_DRIVER) continue;
    if (device.type === 'gpu' || device.type === 'vfio') {
      if (device.uuid === null) unnamed += 1;
      else whole.add(device.uuid);
    } else if (device.type === 'mig') {
      mig = true;
      if (device.parentUuid !== null) parents.add(device.parentUuid);
    } else {
      continue;
    }
    model ??= gpuModel(device.productName);
  }
  for (const uuid of whole) parents.delete(uuid);
  const gpus = whole.size + unnamed + parents.size;
  return gpus === 0 ? NO_GPUS : { gpus, unhealthyGpus: 0, model, sharing: mig ? 'mig' : 'exclusive' };
}
