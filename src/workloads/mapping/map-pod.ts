// A standalone GPU Pod (one not owned by a Job) → its workload row and GPU interval; and the GPU
// interval of any pod, which is also how a Job's pods count toward its GPU-hours.
import type { PodGpuInterval } from '../../domain/workload.js';
import type { MappingContext } from './mapping-context.js';
import { workloadRecord, type MappedWorkload } from './mapped-workload.js';
import type { PodFacts } from '../facts/pod-facts.js';
import { podFailureEvidence } from '../failure/pod-failure-evidence.js';
import { podState } from './pod-status.js';
import { latestMs } from '../facts/timestamps.js';
import type { PodShares } from './pod-shares.js';
import { countedShare, workloadShare } from './workload-share.js';

export interface PodIntervalOptions {
  /** Defaults to the owning Job's uid, else the pod's own uid. */
  workloadId?: string;
  deleted?: { at: number };
  observedAt?: number;
  shares?: PodShares;
}

/**
 * The time one pod held its GPUs: from status.startTime to its containers' last finishedAt once it
 * finished; when deleted while running, to the deletion time or, if later, when its containers
 * actually stopped (the grace period still holds the GPUs). finishedAt is null while it runs.
 */
export function podInterval(pod: PodFacts, options: PodIntervalOptions = {}): PodGpuInterval {
  const state = podState(pod, options);
  let finishedAt = state.completedAt;
  if (state.status === 'cancelled') finishedAt = latestMs([state.completedAt, pod.lastFinishAt]);
  return {
    podUid: pod.uid,
    workloadId: options.workloadId ?? pod.jobUid ?? pod.uid,
    gpus: options.shares?.devicesOf(pod) ?? pod.gpus,
    ...(options.shares === undefined ? {} : { share: countedShare(options.shares.ofPod(pod), options.shares.basis) }),
    startedAt: state.startedAt,
    finishedAt,
  };
}

/**
 * The workload of a standalone GPU Pod; null for a pod owned by a Job, holding no GPU (its DRA claims
 * none, or none known yet), or without uid.
 */
export function mapPod(pod: PodFacts, context: MappingContext): MappedWorkload | null {
  if (pod.uid === '' || pod.jobUid !== null) return null;
  const { shares } = context;
  const gpuCount = shares?.devicesOf(pod) ?? pod.gpus;
  if (gpuCount === 0) return null;
  const state = podState(pod, context);
  const share = shares?.ofPod(pod);
  return {
    workload: workloadRecord(pod, {
      kind: 'Pod',
      gpuCount,
      ...(shares === undefined || share === undefined ? {} : {
        share: workloadShare(gpuCount, [{ share, running: state.status === 'running', startedAt: state.startedAt }], share, shares.basis),
      }),
      state,
      context,
      failureEvidence: podFailureEvidence(pod.failureHints),
    }),
    intervals: [podInterval(pod, { ...context, workloadId: pod.uid })],
  };
}
