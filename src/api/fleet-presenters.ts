// The fleet's results → JSON: snake_case, GPUs to 4 decimals (presenters.ts does the same for workloads).
import type { FleetNowFigures, FleetResult } from '../query/fleet.js';
import type { FleetNodeView } from '../query/fleet-nodes.js';
import { round } from './presenters.js';

const gpus = (value: number) => round(value, 4);

function presentNow(figures: FleetNowFigures) {
  return {
    total_gpus: gpus(figures.totalGpus),
    allocated_gpus: gpus(figures.allocatedGpus),
    unallocated_gpus: gpus(figures.unallocatedGpus),
    unavailable_gpus: gpus(figures.unavailableGpus),
    nodes: figures.nodes,
    nodes_unavailable: figures.nodesUnavailable,
  };
}

export function presentFleet(result: FleetResult) {
  return {
    now: presentNow(result.now),
    grouped: result.groups.map((group) => ({ key: group.key, ...presentNow(group) })),
  };
}

export function presentFleetNode(node: FleetNodeView) {
  return {
    cluster_id: node.clusterId,
    node: node.name,
    gpu_model: node.gpuModel,
    instance_type: node.instanceType,
    pool_id: node.poolId,
    state: node.state,
    gpu_sharing: node.sharing,
    total_gpus: gpus(node.totalGpus),
    allocated_gpus: gpus(node.allocatedGpus),
    unallocated_gpus: gpus(node.unallocatedGpus),
    unavailable_gpus: gpus(node.unavailableGpus),
    unhealthy_gpus: gpus(node.unhealthyGpus),
  };
}
