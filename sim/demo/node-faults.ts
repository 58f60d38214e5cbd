// The demo's GPU nodes as a platform team finds them on a given day: every one Ready, except one
// cordoned for maintenance (kubectl cordon), one whose kubelet stopped posting its status (NotReady),
// and one whose device plugin took a failed GPU out of allocatable. No Job is placed on a GPU out of
// service (world.ts asks schedulableGpu); the month of history before is as it was. Fixed names and
// no random draw, so the rest of the world stays as the seed makes it.
import type { KubeObject } from '../kube-api/resources.js';
import type { KubeStore } from '../kube-api/store.js';

export const CORDONED_NODE = 'gpu-east-node-09';
export const NOT_READY_NODE = 'gpu-west-node-11';
export const UNHEALTHY_GPU_NODE = 'gpu-east-node-08';
/** The GPU of UNHEALTHY_GPU_NODE that failed: its last one. */
const UNHEALTHY_GPU_INDEX = 7;
/** Since when every node has been Ready, as far as its Ready condition says. */
const READY_FOR_MS = 40 * 24 * 3_600_000;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Whether the scheduler may place a pod on this GPU of this node now. */
export function schedulableGpu(node: string, gpuIndex: number): boolean {
  if (node === CORDONED_NODE || node === NOT_READY_NODE) return false;
  return !(node === UNHEALTHY_GPU_NODE && gpuIndex === UNHEALTHY_GPU_INDEX);
}

function readyCondition(node: string, now: number): Record<string, string> {
  if (node === NOT_READY_NODE) {
    // What the node lifecycle controller writes once the kubelet has been silent for its grace period.
    return { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: iso(now - 20 * 60_000), lastTransitionTime: iso(now - 19 * 60_000) };
  }
  return { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status',
    lastHeartbeatTime: iso(now - 10_000), lastTransitionTime: iso(now - READY_FOR_MS) };
}

/** The node with its state: the Ready condition, a cordon, and GPU capacity above allocatable where a GPU failed. */
function withState(node: KubeObject, now: number): KubeObject {
  const name = node.metadata.name ?? '';
  const spec = (node.spec ?? {}) as Record<string, unknown>;
  const status = (node.status ?? {}) as Record<string, unknown>;
  const taints = name === CORDONED_NODE
    ? [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: iso(now - 3 * 3_600_000) }]
    : name === NOT_READY_NODE ? [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: iso(now - 19 * 60_000) }] : [];
  const gpus = Number(node.metadata.labels?.['nvidia.com/gpu.count'] ?? 0);
  const failedGpu = name === UNHEALTHY_GPU_NODE
    ? { capacity: { 'nvidia.com/gpu': String(gpus) }, allocatable: { 'nvidia.com/gpu': String(gpus - 1) } }
    : {};
  return {
    ...node,
    spec: { ...spec, ...(name === CORDONED_NODE ? { unschedulable: true } : {}), ...(taints.length > 0 ? { taints } : {}) },
    status: { ...status, ...failedGpu, conditions: [readyCondition(name, now)] },
  };
}

/** Gives every node of `store` its state, as its kubelet and the node controller would have written it by `now`. */
export function reportNodeStates(store: KubeStore, now: number): void {
  for (const node of store.list('nodes')) store.update('nodes', withState(node, now));
}
