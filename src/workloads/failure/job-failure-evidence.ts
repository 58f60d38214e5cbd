// What a Job's status proves about why it failed, and what its last attempt (a pod) adds
// (docs/workloads.md "Why a workload failed"). failureReasonOf (failure-reason.ts) ranks the result.
import type { FailureReason } from '../../domain/failure-reason.js';
import type { JobFacts } from '../facts/job-facts.js';
import type { PodFacts } from '../facts/pod-facts.js';
import { podFailureEvidence } from './pod-failure-evidence.js';
import type { WorkloadState } from '../mapping/workload-state.js';

/**
 * The reason of the Job controller's Failed condition. PodFailurePolicy maps to nothing: a FailJob rule
 * matched a pod's exit code or condition, so the pod tells the cause (its evidence, else its exit code).
 */
const BY_FAILED_REASON: ReadonlyMap<string, FailureReason> = new Map<string, FailureReason>([
  // spec.backoffLimit: too many failed pods (or container restarts).
  ['BackoffLimitExceeded', 'backoff_limit_exceeded'],
  // spec.backoffLimitPerIndex: more indexes than maxFailedIndexes used up their retries, or every
  // index finished and some used up theirs. The same limit, counted per index.
  ['MaxFailedIndexesExceeded', 'backoff_limit_exceeded'],
  ['FailedIndexes', 'backoff_limit_exceeded'],
  // spec.activeDeadlineSeconds of the Job.
  ['DeadlineExceeded', 'deadline_exceeded'],
]);

/** The reason a Failed condition's `reason` proves, as the shared constant; null for any other. */
export function jobFailedBy(reason: string | undefined): FailureReason | null {
  return reason === undefined ? null : (BY_FAILED_REASON.get(reason) ?? null);
}

/**
 * When a pod ended, as far as its Job's reason goes: its containers' last finish; for a pod that ended
 * without any container reporting a stop, once Failed its latest condition transition (PodGC marking
 * the pod of a vanished node), else its deletion request (the taint manager's, on an unreachable
 * node). Null while it runs.
 */
function endOf(pod: PodFacts): number | null {
  if (pod.lastFinishAt !== null) return pod.lastFinishAt;
  if (pod.phase === 'Failed') return pod.latestTransitionAt ?? pod.deletionRequestedAt;
  return pod.deletionRequestedAt;
}

/**
 * The Job's last attempt: of the pods that ended by the time the Job failed, the one that ended last
 * (on a tie, the later in the list). That is mostly the pod whose exit code the Job has
 * (mapping/job-status.ts), with two differences: a pod lost with its node has no container finish, and is
 * often the one that failed the Job; and a pod that ended after the Job failed (the Job controller
 * killing the others, the garbage collector deleting them) is a consequence, not the cause.
 */
function lastAttempt(pods: readonly PodFacts[], failedAt: number): PodFacts | null {
  let last: PodFacts | null = null;
  let lastAt = Number.NEGATIVE_INFINITY;
  for (const pod of pods) {
    const at = endOf(pod);
    if (at !== null && at <= failedAt && at >= lastAt) {
      last = pod;
      lastAt = at;
    }
  }
  return last;
}

/**
 * What a Job proves of why it failed: its Failed condition's reason and what its last attempt proves,
 * the pod's cause ranking first (an OOMKilled pod that used up the backoff limit is oom_killed). A
 * cancelled Job proves nothing: its pods that ended earlier were retried, so the deletion is its reason.
 */
export function jobFailureEvidence(job: JobFacts, state: WorkloadState, pods: readonly PodFacts[]): readonly FailureReason[] {
  if (state.status !== 'failed') return [];
  const fromPod = podFailureEvidence(lastAttempt(pods, state.completedAt ?? Number.POSITIVE_INFINITY)?.failureHints ?? 0);
  return job.failedBy === null ? fromPod : [job.failedBy, ...fromPod];
}
