// What the fleet keeps of a Node: its name, instance type, capacity type, state, and what its device plugins report
// of its GPUs (src/k8s/gpus/physical-gpus.ts). Its DRA devices come from the ResourceSlices that
// name it (cluster-fleet.ts).
import { capacityTypeFromLabels, type CapacityType } from '../domain/capacity-type.js';
import type { NodeState } from '../domain/fleet.js';
import { instanceTypeFromLabels, type InstanceTypeKeys } from '../domain/instance-type.js';
import type { Node } from '../k8s/objects/k8s-types.js';
import { devicePluginGpus, type NodeGpus } from '../k8s/gpus/physical-gpus.js';
import type { ShareSettings } from '../k8s/gpus/pod-share.js';

export interface NodeFacts {
  name: string;
  instanceType: string;
  /** How the node is sold; null when no label says. */
  capacityType: CapacityType | null;
  state: NodeState;
  devicePlugin: NodeGpus;
}

export interface NodeReading {
  /** The label keys, as configured; capacityType '': the well-known labels (domain/capacity-type.ts). */
  keys: InstanceTypeKeys & { capacityType: string };
  gpuResources: readonly string[];
  settings?: ShareSettings;
}

/** Not Ready (False, Unknown or no condition yet) wins over cordoned: neither takes new pods, and NotReady says more. */
export function nodeState(node: Node): NodeState {
  const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready?.status !== 'True') return 'not_ready';
  return node.spec?.unschedulable === true ? 'cordoned' : 'ready';
}

export function nodeFacts(node: Node, reading: NodeReading): NodeFacts {
  return {
    name: node.metadata?.name ?? '',
    instanceType: instanceTypeFromLabels(node.metadata?.labels, reading.keys),
    capacityType: capacityTypeFromLabels(node.metadata?.labels, reading.keys.capacityType),
    state: nodeState(node),
    devicePlugin: devicePluginGpus(node, reading.gpuResources, reading.settings),
  };
}
