// A batch/v1 Job whose pod template requests GPUs → its workload row, with its pods' GPU intervals.
// The caller passes the Job's pods (context.pods) and the node its first pod runs on (context.node,
// see firstPodNodeName).
import type { JobFacts } from '../facts/job-facts.js';
import { jobFailureEvidence } from '../failure/job-failure-evidence.js';
import { jobState } from './job-status.js';
import type { MappingContext } from './mapping-context.js';
import { workloadRecord, type MappedWorkload } from './mapped-workload.js';
import { podInterval } from './map-pod.js';
import type { PodFacts } from '../facts/pod-facts.js';
import type { PodGpuInterval } from '../../domain/workload.js';
import type { PodShares } from './pod-shares.js';
import { workloadShare, type WorkloadShare } from './workload-share.js';

/** The node of the Job's earliest-created pod that is scheduled; null when none is. */
export function firstPodNodeName(pods: readonly PodFacts[]): string | null {
  let first: { node: string; at: number } | null = null;
  for (const pod of pods) {
    const node = pod.nodeName;
    if (node === undefined || node === '') continue;
    const at = pod.createdAt ?? Number.POSITIVE_INFINITY;
    if (first === null || at < first.at) first = { node, at };
  }
  return first?.node ?? null;
}

/**
 * The devices each pod of the Job holds: what its template asks for, or the most any pod holds with
 * its DRA claims (0 until one was allocated).
 */
function devicesPerPod(job: JobFacts, pods: readonly PodFacts[], shares: PodShares | undefined): number {
  if (shares === undefined) return job.gpusPerPod;
  let most = job.gpusPerPod;
  for (const pod of pods) {
    const devices = shares.devicesOf(pod);
    if (devices > pod.gpus) most = Math.max(most, devices);
  }
  return most;
}

/**
 * The workload of a Job; null when its pod template requests no GPU (nor do its pods' DRA claims
 * hold any yet) or it has no uid. gpu_count = per-pod devices × spec.parallelism (default 1).
 */
export function mapJob(job: JobFacts, context: MappingContext): MappedWorkload | null {
  if (job.uid === '') return null;
  const pods = context.pods ?? [];
  const { shares } = context;
  const perPod = devicesPerPod(job, pods, shares);
  if (perPod === 0) return null; // claims only, none of them allocated yet
  const gpuCount = perPod * job.parallelism;
  const state = jobState(job, { pods, deleted: context.deleted, observedAt: context.observedAt });
  const intervals = pods.map((pod) =>
    // A deleted Job takes its unfinished pods with it: they end at the Job's deletion at the latest.
    podInterval(pod, {
      workloadId: job.uid,
      deleted: context.deleted,
      observedAt: context.observedAt,
      ...(shares === undefined ? {} : { shares }),
    }),
  );
  return {
    workload: workloadRecord(job, {
      kind: 'Job',
      gpuCount,
      ...(shares === undefined ? {} : { share: jobShare(job, gpuCount, pods, intervals, shares) }),
      state,
      context,
      failureEvidence: jobFailureEvidence(job, state, pods),
    }),
    intervals,
  };
}

/** The Job's share from its pods' (their intervals say which run), else from its template on its first pod's node. */
function jobShare(
  job: JobFacts,
  gpuCount: number,
  pods: readonly PodFacts[],
  intervals: readonly PodGpuInterval[],
  shares: PodShares,
): WorkloadShare {
  const podShares = pods.map((pod, k) => {
    const startedAt = intervals[k]?.startedAt ?? null;
    return { share: shares.ofPod(pod), running: startedAt !== null && intervals[k]?.finishedAt === null, startedAt };
  });
  return workloadShare(gpuCount, podShares, shares.ofAsk(job.askPerPod, firstPodNodeName(pods)), shares.basis);
}
