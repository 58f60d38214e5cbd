// The fleet's GPUs as the service counts them (docs/fleet.md): each node's physical GPUs, in
// whole-GPU equivalents, split at every instant into allocated (held by a running workload's pod),
// unavailable (on a node out of service, or marked unhealthy, and not allocated) and unallocated
// (the rest). The three always add up to the node's GPUs.
import type { GpuSharing } from './gpu-sharing.js';

/** `cordoned`: spec.unschedulable; `not_ready`: its Ready condition is not True (NotReady wins over cordoned). */
export const NODE_STATES = ['ready', 'cordoned', 'not_ready'] as const;
export type NodeState = (typeof NODE_STATES)[number];

export function isNodeState(value: unknown): value is NodeState {
  return (NODE_STATES as readonly unknown[]).includes(value);
}

/** One GPU node of a watched cluster, now. */
export interface FleetNode {
  clusterId: string;
  /** The cluster's configured organization: nodes are shared infrastructure, no team's. */
  organizationId: string;
  name: string;
  gpuModel: string | null;
  instanceType: string;
  /** How the node's GPUs are handed out (the same words as a workload's gpu_sharing). */
  sharing: GpuSharing;
  state: NodeState;
  /** Physical GPUs, whole-GPU equivalents. */
  totalGpus: number;
  /** GPUs the device plugin took out of allocatable. */
  unhealthyGpus: number;
  /** What running pods hold on the node, at most its GPUs. */
  allocatedGpus: number;
}

/** How a node's GPUs split at an instant. */
export interface GpuSplit {
  totalGpus: number;
  allocatedGpus: number;
  unavailableGpus: number;
  unallocatedGpus: number;
}

/**
 * The split of a node: what is allocated stays allocated on a node out of service (a cordoned node
 * still runs its pods until they end); the rest of such a node is unavailable, and of a ready node
 * its unhealthy GPUs that nothing holds.
 */
export function gpuSplit(node: Pick<FleetNode, 'state' | 'totalGpus' | 'unhealthyGpus' | 'allocatedGpus'>): GpuSplit {
  const totalGpus = node.totalGpus;
  const allocatedGpus = Math.min(totalGpus, node.allocatedGpus);
  const free = totalGpus - allocatedGpus;
  const unavailableGpus = node.state === 'ready' ? Math.min(free, node.unhealthyGpus) : free;
  return { totalGpus, allocatedGpus, unavailableGpus, unallocatedGpus: free - unavailableGpus };
}
