// A workload's share of its GPUs, from the shares its pods held (src/k8s/gpus/pod-share.ts):
// allocated_gpus is gpu_count × the share of each device, taken from the pods that run, else from
// the pod that started last, else from what it asks on the node it is bound to (if any). A Job whose
// pods ran on different nodes is reported by those running now; its GPU-hours integrate each pod's
// own share (podInterval).
import type { GpuHoursBasis, GpuSharing } from '../../domain/gpu-sharing.js';
import { moreShared, type GpuShare } from '../../k8s/gpus/pod-share.js';

/** What a workload row says of how its GPUs were counted. */
export interface WorkloadShare {
  allocatedGpus: number;
  gpuSharing: GpuSharing;
  gpuModel: string | null;
}

/** One pod's share, and whether and since when it runs. */
export interface PodShare {
  share: GpuShare;
  running: boolean;
  startedAt: number | null;
}

/** The GPU-hours a share counts, on the basis. */
export function countedShare(share: GpuShare, basis: GpuHoursBasis): number {
  return basis === 'devices' ? share.devices : share.equivalents;
}

function representatives(pods: readonly PodShare[]): GpuShare[] {
  const running = pods.filter((pod) => pod.running && pod.share.devices > 0);
  if (running.length > 0) return running.map((pod) => pod.share);
  let last: PodShare | null = null;
  for (const pod of pods) {
    if (pod.startedAt === null || pod.share.devices === 0) continue;
    if (last === null || (last.startedAt ?? 0) < pod.startedAt) last = pod;
  }
  return last === null ? [] : [last.share];
}

/** The row's share: `gpuCount` devices at the share of each device its pods (else `asked`) show. */
export function workloadShare(gpuCount: number, pods: readonly PodShare[], asked: GpuShare, basis: GpuHoursBasis): WorkloadShare {
  const shares = representatives(pods);
  if (shares.length === 0 && asked.devices > 0) shares.push(asked);
  let devices = 0;
  let counted = 0;
  let gpuSharing: GpuSharing = 'exclusive';
  let gpuModel: string | null = null;
  for (const share of shares) {
    devices += share.devices;
    counted += countedShare(share, basis);
    gpuSharing = moreShared(gpuSharing, share.sharing);
    gpuModel ??= share.model;
  }
  const perDevice = devices === 0 ? 1 : counted / devices;
  return { allocatedGpus: gpuCount * perDevice, gpuSharing, gpuModel };
}
