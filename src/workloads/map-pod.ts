// A standalone GPU Pod (one not owned by a Job) → its workload row and GPU interval; and the GPU
// interval of any pod, which is also how a Job's pods count toward its GPU-hours.
import type { PodGpuInterval } from '../domain/workload.js';
import { effectiveGpuRequest } from './gpu-request.js';
import type { Pod } from './k8s-types.js';
import { DEFAULT_GPU_RESOURCES, type MappingContext } from './mapping-context.js';
import { withUid, workloadRecord, type MappedWorkload } from './mapped-workload.js';
import { jobOwnerUid } from './owner.js';
import { lastContainerFinish } from './pod-containers.js';
import { podState } from './pod-status.js';
import { latestMs } from './timestamps.js';

export interface PodIntervalOptions {
  /** Defaults to the owning Job's uid, else the pod's own uid. */
  workloadId?: string;
  gpuResources?: readonly string[];
  deleted?: { at: number };
  observedAt?: number;
}

/**
 * The time one pod held its GPUs: from status.startTime to its containers' last finishedAt once it
 * finished; when deleted while running, to the deletion time or, if later, when its containers
 * actually stopped (the grace period still holds the GPUs). finishedAt is null while it runs.
 */
export function podInterval(pod: Pod, options: PodIntervalOptions = {}): PodGpuInterval {
  const state = podState(pod, options);
  let finishedAt = state.completedAt;
  if (state.status === 'cancelled') finishedAt = latestMs([state.completedAt, lastContainerFinish(pod)]);
  return {
    podUid: pod.metadata?.uid ?? '',
    workloadId: options.workloadId ?? jobOwnerUid(pod.metadata) ?? pod.metadata?.uid ?? '',
    gpus: effectiveGpuRequest(pod.spec, options.gpuResources ?? DEFAULT_GPU_RESOURCES),
    startedAt: state.startedAt,
    finishedAt,
  };
}

/** The workload of a standalone GPU Pod; null for a pod owned by a Job, requesting no GPU, or without uid. */
export function mapPod(pod: Pod, context: MappingContext): MappedWorkload | null {
  const meta = withUid(pod.metadata);
  if (meta === null || jobOwnerUid(meta) !== null) return null;
  const gpuCount = effectiveGpuRequest(pod.spec, context.gpuResources);
  if (gpuCount === 0) return null;
  const state = podState(pod, context);
  return {
    workload: workloadRecord(meta, { kind: 'Pod', gpuCount, state, context }),
    intervals: [podInterval(pod, { ...context, workloadId: meta.uid })],
  };
}
