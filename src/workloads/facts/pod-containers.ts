// What a pod's container statuses tell about how it ended: when its containers stopped, with which
// exit code and why. Init containers are read before app containers, each list in its own order.
import type { ContainerStateTerminated, Pod } from '../../k8s/objects/k8s-types.js';
import { latestMs, timestampMs } from './timestamps.js';

/** The terminated state of each container that has one (current state, else the previous run's). */
function terminatedStates(pod: Pod): ContainerStateTerminated[] {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const states: ContainerStateTerminated[] = [];
  for (const status of statuses) {
    const terminated = status.state?.terminated ?? status.lastState?.terminated;
    if (terminated !== undefined) states.push(terminated);
  }
  return states;
}

/** The latest finishedAt of the pod's terminated containers; null when none has finished. */
export function lastContainerFinish(pod: Pod): number | null {
  return latestMs(terminatedStates(pod).map((state) => timestampMs(state.finishedAt)));
}

/** The first non-zero exit code of the pod's terminated containers; null when there is none. */
export function firstNonZeroExitCode(pod: Pod): number | null {
  for (const state of terminatedStates(pod)) {
    if (state.exitCode !== undefined && state.exitCode !== 0) return state.exitCode;
  }
  return null;
}

/** Whether the last run of any of the pod's containers ended for `reason` (e.g. the runtime's `OOMKilled`). */
export function anyContainerEndedBy(pod: Pod, reason: string): boolean {
  return terminatedStates(pod).some((state) => state.reason === reason);
}
