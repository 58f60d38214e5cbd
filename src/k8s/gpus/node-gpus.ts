// What a node's labels say of the GPUs behind each resource it offers, as NVIDIA's GPU feature
// discovery (GFD) writes them: the product, the device memory, the replicas of a shared (time-sliced
// or MPS) device, and the MIG profile behind a resource. With the `single` MIG strategy the node
// offers `nvidia.com/gpu` and names the profile in the product (`…-MIG-1g.5gb`); with `mixed` it
// offers one `nvidia.com/mig-<profile>` resource per profile, each with labels of its own
// (`nvidia.com/mig-1g.10gb.slices.ci`). A shared resource carries GFD's `-SHARED` product suffix, and
// the device plugin's `renameByDefault` names it `<resource>.shared`.
import type { StringMap } from '../objects/k8s-types.js';
import { gfdProductName } from './product-name.js';

const NVIDIA = 'nvidia.com/';
const SHARED_SUFFIX = '.shared';

/** How one device of a resource is shared, as the node's labels say. */
export interface DeviceSharing {
  /** The replicas of each device (time-slicing or MPS): 1 when not shared. */
  replicas: number;
  /** `mps` when GFD says so; `time-slicing` for any other shared device. */
  strategy: 'none' | 'time-slicing' | 'mps';
}

/** The MIG instance behind one device of a resource: its profile and compute slices (when GFD gives them). */
export interface MigDevice {
  profile: string;
  /** `<resource>.slices.ci` (else `.slices.gi`) from GFD; null when the node does not say. */
  labelledSlices: number | null;
}

function positiveInteger(value: string | undefined): number | null {
  if (value === undefined || !/^\d+$/.test(value.trim())) return null;
  const number = Number(value.trim());
  return number > 0 ? number : null;
}

/** The GFD label prefix of a resource: `nvidia.com/gpu` for `nvidia.com/gpu.shared`, itself otherwise. */
function labelBase(resource: string): string {
  return resource.endsWith(SHARED_SUFFIX) ? resource.slice(0, -SHARED_SUFFIX.length) : resource;
}

/** The product behind a resource: `<resource>.product` (mixed MIG), else `nvidia.com/gpu.product`. */
export function resourceProduct(labels: StringMap, resource: string): string | null {
  const own = labels[`${labelBase(resource)}.product`];
  return own ?? labels[`${NVIDIA}gpu.product`] ?? null;
}

/** The GPU model: GFD's product without the `-MIG-<profile>` and `-SHARED` suffixes; null when unlabelled. */
export function gpuModel(name: string | null): string | null {
  const product = gfdProductName(name);
  if (product === null) return null;
  const model = product.replace(/-SHARED$/, '').replace(/-MIG-[^-]+$/, '');
  return model === '' ? null : model;
}

/** The MIG instance behind a resource on this node; null when its devices are whole GPUs. */
export function migDevice(labels: StringMap, resource: string): MigDevice | null {
  const base = labelBase(resource);
  let profile: string | null = null;
  if (base.startsWith(`${NVIDIA}mig-`)) profile = base.slice(`${NVIDIA}mig-`.length);
  else {
    const suffix = /-MIG-([^-]+)(?:-SHARED)?$/.exec(resourceProduct(labels, resource) ?? '');
    if (suffix !== null) profile = suffix[1] ?? null;
  }
  if (profile === null) return null;
  const labelledSlices = positiveInteger(labels[`${base}.slices.ci`]) ?? positiveInteger(labels[`${base}.slices.gi`]);
  return { profile, labelledSlices };
}

/** How the devices of a resource are shared on this node. */
export function deviceSharing(labels: StringMap, resource: string): DeviceSharing {
  const base = labelBase(resource);
  const replicas = positiveInteger(labels[`${base}.replicas`]) ?? 1;
  const said = labels[`${base}.sharing-strategy`] ?? labels[`${NVIDIA}gpu.sharing-strategy`];
  if (said === 'mps') return { replicas, strategy: 'mps' };
  const shared = replicas > 1 || resource.endsWith(SHARED_SUFFIX) || said === 'time-slicing';
  return { replicas, strategy: shared ? 'time-slicing' : 'none' };
}

/** The memory of one whole GPU in MiB (`nvidia.com/gpu.memory`); null when unlabelled or a MIG instance's. */
export function deviceMemoryMiB(labels: StringMap): number | null {
  if (/-MIG-/.test(labels[`${NVIDIA}gpu.product`] ?? '')) return null;
  return positiveInteger(labels[`${NVIDIA}gpu.memory`]);
}

/** The suffixes of the per-resource labels these rules read (`nvidia.com/gpu.replicas`, `nvidia.com/mig-1g.10gb.slices.ci`). */
const READ_SUFFIXES = ['.product', '.replicas', '.sharing-strategy', '.memory', '.slices.ci', '.slices.gi'];

/**
 * Whether the rules here read a node label: GFD's of `nvidia.com/gpu` and of each `nvidia.com/mig-…`
 * resource, and nothing else, so that a cache of nodes can keep only these (GFD writes some forty).
 */
export function isGpuShareLabel(key: string): boolean {
  if (!key.startsWith(NVIDIA)) return false;
  const name = key.slice(NVIDIA.length);
  if (!name.startsWith('gpu.') && !name.startsWith('mig-')) return false;
  return READ_SUFFIXES.some((suffix) => name.endsWith(suffix));
}
