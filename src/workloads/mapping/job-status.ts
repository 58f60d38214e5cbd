// Status and times of a batch/v1 Job (DECISIONS "Status and times").
//
// - Complete condition → completed, Failed condition → failed, at the condition's lastTransitionTime
//   (else status.completionTime, else `observedAt`). A finished Job stays finished when deleted.
// - Deleted (or given a deletionTimestamp) unfinished → cancelled at the deletion time (facts/deletion.ts).
// - spec.suspend (Kueue holds Jobs suspended until admitted) → pending.
// - status.startTime set → running; else pending.
// - exit code of a finished Job: the first non-zero container exit code of its pod that finished last,
//   else 0 (also when its pods are gone).
import type { JobFacts } from '../facts/job-facts.js';
import type { PodFacts } from '../facts/pod-facts.js';
import type { StateOptions } from './pod-status.js';
import type { WorkloadState } from './workload-state.js';

/** The exit code of the pod whose containers finished last (on a tie, the later one in the list), else 0. */
function exitCodeOf(pods: readonly PodFacts[]): number {
  let last: PodFacts | null = null;
  let lastAt = Number.NEGATIVE_INFINITY;
  for (const pod of pods) {
    const at = pod.lastFinishAt;
    if (at !== null && at >= lastAt) {
      last = pod;
      lastAt = at;
    }
  }
  return last?.failedExitCode ?? 0;
}

export function jobState(job: JobFacts, options: StateOptions & { pods?: readonly PodFacts[] } = {}): WorkloadState {
  const startedAt = job.startedAt;
  const pods = options.pods ?? [];
  if (job.finish !== null) {
    return { status: job.finish, startedAt, completedAt: job.finishedAt ?? options.observedAt ?? null, exitCode: exitCodeOf(pods) };
  }
  const deletedAt = job.deletionRequestedAt ?? options.deleted?.at ?? null;
  if (deletedAt !== null) return { status: 'cancelled', startedAt, completedAt: deletedAt, exitCode: exitCodeOf(pods) };
  if (job.suspended) return { status: 'pending', startedAt, completedAt: null, exitCode: null };
  return { status: startedAt === null ? 'pending' : 'running', startedAt, completedAt: null, exitCode: null };
}
