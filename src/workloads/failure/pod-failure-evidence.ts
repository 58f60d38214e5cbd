// What a Pod's own status proves about why it ended (docs/workloads.md "Why a workload failed"). The
// caches keep it as one small integer per pod (facts/pod-facts.ts), a bit per reason, rather than the
// strings it is read from: a reason is read once per version of a pod, and most pods have none.
import type { FailureReason } from '../../domain/failure-reason.js';
import type { Pod } from '../../k8s/objects/k8s-types.js';
import { anyContainerEndedBy } from '../facts/pod-containers.js';

/** The reasons a pod's status can prove; a reason's bit is 1 << its index. */
const POD_REASONS = ['preempted', 'node_lost', 'evicted', 'oom_killed', 'deadline_exceeded'] as const satisfies readonly FailureReason[];
type PodReason = (typeof POD_REASONS)[number];

// Maps, not object literals: a status.reason is any string, and `constructor` must not find anything.

/** status.reason, as the kubelet and the node controller set it when they end a pod. */
const BY_POD_REASON: ReadonlyMap<string, PodReason> = new Map<string, PodReason>([
  // Node-pressure eviction by the kubelet (phase Failed).
  ['Evicted', 'evicted'],
  // The kubelet ending a pod to admit a critical pod (phase Failed).
  ['Preempting', 'preempted'],
  // spec.activeDeadlineSeconds ran out (phase Failed).
  ['DeadlineExceeded', 'deadline_exceeded'],
  // The node controller of older releases, on an unreachable node.
  ['NodeLost', 'node_lost'],
  // Graceful node shutdown: `Terminated` since 1.22, `Shutdown` in 1.20 and 1.21. The node went away
  // under the pod, so this ranks above the TerminationByKubelet condition that comes with it.
  ['Terminated', 'node_lost'],
  ['Shutdown', 'node_lost'],
]);

/** The reason of a DisruptionTarget condition (status True), set just before Kubernetes ends a pod. */
const BY_DISRUPTION: ReadonlyMap<string, PodReason> = new Map<string, PodReason>([
  ['PreemptionByScheduler', 'preempted'],
  // Its name in 1.25, before the rename.
  ['PreemptionByKubeScheduler', 'preempted'],
  ['EvictionByEvictionAPI', 'evicted'],
  // Node-pressure eviction, a critical pod's admission or a node shutdown: status.reason tells which.
  ['TerminationByKubelet', 'evicted'],
  // A NoExecute taint the pod does not tolerate, mostly node.kubernetes.io/unreachable or not-ready.
  ['DeletionByTaintManager', 'node_lost'],
  // PodGC deleting a pod bound to a Node that no longer exists.
  ['DeletionByPodGC', 'node_lost'],
]);

const bit = (reason: PodReason): number => 1 << POD_REASONS.indexOf(reason);

/** The bit set of the reasons a version of a pod proves; 0 for most pods. */
export function podFailureHints(pod: Pod): number {
  const status = pod.status;
  let hints = 0;
  const podReason = status?.reason === undefined ? undefined : BY_POD_REASON.get(status.reason);
  if (podReason !== undefined) hints |= bit(podReason);
  // The node stopped reporting the pod: the control plane cannot tell what runs there.
  if (status?.phase === 'Unknown') hints |= bit('node_lost');
  for (const condition of status?.conditions ?? []) {
    if (condition.type !== 'DisruptionTarget' || condition.status !== 'True' || condition.reason === undefined) continue;
    const disruption = BY_DISRUPTION.get(condition.reason);
    if (disruption !== undefined) hints |= bit(disruption);
  }
  if (anyContainerEndedBy(pod, 'OOMKilled')) hints |= bit('oom_killed');
  return hints;
}

const NONE: readonly FailureReason[] = [];

/** The reasons of a bit set, as failureReasonOf (failure-reason.ts) takes them. */
export function podFailureEvidence(hints: number): readonly FailureReason[] {
  if (hints === 0) return NONE;
  return POD_REASONS.filter((_, index) => (hints & (1 << index)) !== 0);
}
