// Status and times of a batch/v1 Job (DECISIONS "Status and times").
//
// - Complete condition → completed, Failed condition → failed, at the condition's lastTransitionTime
//   (else status.completionTime, else `observedAt`). A finished Job stays finished when deleted.
// - Deleted (or given a deletionTimestamp) unfinished → cancelled at the deletion time (deletion.ts).
// - spec.suspend (Kueue holds Jobs suspended until admitted) → pending.
// - status.startTime set → running; else pending.
// - exit code of a finished Job: the first non-zero container exit code of its pod that finished last,
//   else 0 (also when its pods are gone).
import type { Condition, Job, Pod } from './k8s-types.js';
import { deletionTime } from './deletion.js';
import { firstNonZeroExitCode, lastTerminatedPod } from './pod-containers.js';
import type { StateOptions } from './pod-status.js';
import { timestampMs } from './timestamps.js';
import type { WorkloadState } from './workload-state.js';

function trueCondition(job: Job, type: string): Condition | undefined {
  return job.status?.conditions?.find((condition) => condition.type === type && condition.status === 'True');
}

function exitCodeOf(pods: readonly Pod[]): number {
  const last = lastTerminatedPod(pods);
  return (last === null ? null : firstNonZeroExitCode(last)) ?? 0;
}

export function jobState(job: Job, options: StateOptions & { pods?: readonly Pod[] } = {}): WorkloadState {
  const startedAt = timestampMs(job.status?.startTime);
  const pods = options.pods ?? [];
  for (const [type, status] of [['Complete', 'completed'], ['Failed', 'failed']] as const) {
    const condition = trueCondition(job, type);
    if (condition === undefined) continue;
    const completedAt =
      timestampMs(condition.lastTransitionTime) ??
      timestampMs(job.status?.completionTime) ??
      options.observedAt ??
      null;
    return { status, startedAt, completedAt, exitCode: exitCodeOf(pods) };
  }
  const deletedAt = deletionTime(job.metadata, options.deleted);
  if (deletedAt !== null) return { status: 'cancelled', startedAt, completedAt: deletedAt, exitCode: exitCodeOf(pods) };
  if (job.spec?.suspend === true) return { status: 'pending', startedAt, completedAt: null, exitCode: null };
  return { status: startedAt === null ? 'pending' : 'running', startedAt, completedAt: null, exitCode: null };
}
