// What a workload indexer tells of the pod GPU intervals it queues, as it queues them, for what
// follows the pods' GPUs live (src/fleet/node-allocations.ts): the writer of the cluster and its
// standbys alike, since both map every event.
import type { PodGpuInterval } from './workload.js';

export interface IntervalObserver {
  /** A pod's interval, with the node the pod is bound to (null: none yet, or not known). */
  interval(interval: PodGpuInterval, nodeName: string | null): void;
  /** The open intervals of these workloads end (a relist found them gone, or they were cancelled). */
  closed(workloadIds: readonly string[]): void;
  /** After a relist of the pods: only these pods are still cached, the others are gone. */
  retainPods(podUids: ReadonlySet<string>): void;
}
