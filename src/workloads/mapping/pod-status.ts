// Status and times of a Pod (DECISIONS "Status and times").
//
// - Pending → pending, Running → running, Succeeded → completed, Failed → failed; Unknown (node lost)
//   or no phase → running once started, else pending.
// - Deleted, or given a deletionTimestamp, before finishing → cancelled, completed_at = deletion time
//   (see facts/deletion.ts). A pod that reached Succeeded/Failed counts as finished before its deletion unless
//   its containers stopped after deletion was requested (then they were killed by it: cancelled).
// - completed_at of a finished pod = its containers' latest finishedAt; when Kubernetes recorded none
//   (e.g. evicted before a container ran), the latest pod condition transition, else `observedAt`, else
//   startTime, else creationTimestamp.
import type { PodFacts } from '../facts/pod-facts.js';
import type { WorkloadState } from './workload-state.js';

export interface StateOptions {
  deleted?: { at: number };
  observedAt?: number;
}

/** When a finished pod finished, by the fallbacks documented above. */
function finishTime(pod: PodFacts, observedAt: number | undefined): number | null {
  return pod.lastFinishAt ?? pod.latestTransitionAt ?? observedAt ?? pod.startedAt ?? pod.createdAt;
}

export function podState(pod: PodFacts, options: StateOptions = {}): WorkloadState {
  const phase = pod.phase;
  const startedAt = pod.startedAt;
  const deletedAt = pod.deletionRequestedAt ?? options.deleted?.at ?? null;
  const exitCode = (): number => pod.failedExitCode ?? 0;

  if (phase === 'Succeeded' || phase === 'Failed') {
    const finished = pod.lastFinishAt;
    // Kubernetes records both times in whole seconds: containers stopped in the very second the
    // deletion was requested were stopped by it (a SIGTERM handled at once), not before it.
    const killedByDeletion = deletedAt !== null && finished !== null && finished >= deletedAt;
    if (!killedByDeletion) {
      return {
        status: phase === 'Succeeded' ? 'completed' : 'failed',
        startedAt,
        completedAt: finishTime(pod, options.observedAt),
        exitCode: exitCode(),
      };
    }
  }
  if (deletedAt !== null) return { status: 'cancelled', startedAt, completedAt: deletedAt, exitCode: exitCode() };
  const running = phase === 'Running' || (phase !== 'Pending' && startedAt !== null);
  return { status: running ? 'running' : 'pending', startedAt, completedAt: null, exitCode: null };
}
