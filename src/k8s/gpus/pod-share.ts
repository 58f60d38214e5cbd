// How much of a GPU one pod holds, from what it asks (gpu-ask.ts) and what its node's labels say
// (node-gpus.ts). The first rule that applies decides: a KAI fraction; HAMi's vGPU cores, else its
// memory over the device's; else each device of each GPU resource, a MIG instance being its compute
// slices over the GPU's and a shared (time-sliced or MPS) device one replica of it. The table with an
// example per rule is in docs/workloads.md ("How GPUs are counted").
import type { StringMap } from '../objects/k8s-types.js';
import type { GpuAsk } from './gpu-ask.js';
import { migComputeSlices, migTotalSlices, type MigTotals } from './mig-profile.js';
import { deviceMemoryMiB, deviceSharing, gpuModel, migDevice, resourceProduct } from './node-gpus.js';

import type { GpuSharing } from '../../domain/gpu-sharing.js';

export type { GpuSharing };

/** The ranking of mixed cases: a workload is reported by the most shared way it holds a GPU. */
const SHARING_RANK: Readonly<Record<GpuSharing, number>> = { exclusive: 0, mig: 1, time_slicing: 2, mps: 3, fractional: 4 };

/** The more shared of two ways. */
export function moreShared(a: GpuSharing, b: GpuSharing): GpuSharing {
  return SHARING_RANK[b] > SHARING_RANK[a] ? b : a;
}

/** The MIG slices assumed of a GPU whose product is unknown or not labelled: the A100's and H100's. */
export const DEFAULT_MIG_TOTAL_SLICES = 7;

export interface GpuShare {
  /** GPU devices held: whole GPUs, MIG instances, replicas and vGPUs count one each. */
  devices: number;
  /** Whole-GPU equivalents held. */
  equivalents: number;
  sharing: GpuSharing;
  /** The product without GFD's suffixes; null when the node does not say. */
  model: string | null;
}

export interface ShareSettings {
  /** Operator-given MIG totals by product (`mig_total_slices`). */
  migTotals?: MigTotals;
  /** Told when a labelled product's MIG total is neither configured nor known (the default was used). */
  onUnknownMigTotal?: (product: string) => void;
}

export const NO_SHARE: Readonly<GpuShare> = Object.freeze({ devices: 0, equivalents: 0, sharing: 'exclusive', model: null });

/** memory ÷ device memory on `devices` devices, at most the devices; the devices when the memory is unknown. */
function memoryShare(memoryMiB: number, devices: number, deviceMiB: number | null): number {
  if (deviceMiB === null) return devices;
  return Math.min(devices, memoryMiB / deviceMiB);
}

/** A MIG instance of `slices` compute slices of a `product` GPU, as a share of the GPU. */
export function migShare(slices: number, product: string | null, settings: ShareSettings): number {
  let total = migTotalSlices(product, settings.migTotals);
  if (total === null) {
    if (product !== null) settings.onUnknownMigTotal?.(product);
    total = DEFAULT_MIG_TOTAL_SLICES;
  }
  return Math.min(1, slices / total);
}

function migFraction(labels: StringMap, resource: string, settings: ShareSettings): number | null {
  const mig = migDevice(labels, resource);
  if (mig === null) return null;
  const slices = mig.labelledSlices ?? migComputeSlices(mig.profile) ?? 1;
  return migShare(slices, resourceProduct(labels, resource), settings);
}

function deviceShare(ask: GpuAsk, labels: StringMap, settings: ShareSettings): GpuShare {
  let devices = 0;
  let equivalents = 0;
  let sharing: GpuSharing = 'exclusive';
  let model: string | null = null;
  for (const [resource, count] of ask.devices) {
    if (count <= 0) continue;
    const mig = migFraction(labels, resource, settings);
    const shared = deviceSharing(labels, resource);
    devices += count;
    equivalents += (count * (mig ?? 1)) / shared.replicas;
    if (mig !== null) sharing = moreShared(sharing, 'mig');
    if (shared.strategy !== 'none') sharing = moreShared(sharing, shared.strategy === 'mps' ? 'mps' : 'time_slicing');
    model ??= gpuModel(resourceProduct(labels, resource));
  }
  return { devices, equivalents, sharing, model };
}

/** The share one pod holds on the node with these labels (empty when unscheduled or unknown). */
export function podGpuShare(ask: GpuAsk, nodeLabels: StringMap | undefined, settings: ShareSettings = {}): GpuShare {
  const labels = nodeLabels ?? {};
  const nodeModel = gpuModel(labels['nvidia.com/gpu.product'] ?? null);
  if (ask.kai !== null) {
    const { fraction, memoryMiB, devices } = ask.kai;
    const perDevice = fraction ?? memoryShare(memoryMiB ?? 0, 1, deviceMemoryMiB(labels));
    return { devices, equivalents: devices * perDevice, sharing: 'fractional', model: nodeModel };
  }
  if (ask.hami !== null) {
    const { vgpus, share, memoryMiB, memoryVgpus } = ask.hami;
    const byMemory = memoryVgpus === 0 ? 0 : memoryShare(memoryMiB, memoryVgpus, deviceMemoryMiB(labels));
    return { devices: vgpus, equivalents: share + byMemory, sharing: 'fractional', model: nodeModel };
  }
  const share = deviceShare(ask, labels, settings);
  return share.devices === 0 ? NO_SHARE : share;
}

/** Two shares one pod holds side by side (devices it asks for and DRA claims, or two claims). */
export function addShares(a: GpuShare, b: GpuShare): GpuShare {
  if (b.devices === 0) return a;
  if (a.devices === 0) return b;
  return {
    devices: a.devices + b.devices,
    equivalents: a.equivalents + b.equivalents,
    sharing: moreShared(a.sharing, b.sharing),
    model: a.model ?? b.model,
  };
}
