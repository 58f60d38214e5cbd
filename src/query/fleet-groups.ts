// The groups of GET /v1/fleet, the same for the GPUs now (fleet.ts) and over a range (fleet-history.ts).
import type { FleetNodeView } from './fleet-nodes.js';

export const FLEET_GROUP_KEYS = ['cluster_id', 'gpu_model', 'pool_id', 'node'] as const;
export type FleetGroupKey = (typeof FLEET_GROUP_KEYS)[number];

/** The key of a node's group: for `node`, cluster and node, since node names repeat across clusters. */
export function fleetGroupKey(node: Pick<FleetNodeView, 'clusterId' | 'name' | 'gpuModel' | 'poolId'>, key: FleetGroupKey): string {
  switch (key) {
    case 'cluster_id':
      return node.clusterId;
    case 'gpu_model':
      return node.gpuModel ?? '';
    case 'pool_id':
      return node.poolId ?? '';
    case 'node':
      return `${node.clusterId}/${node.name}`;
  }
}
