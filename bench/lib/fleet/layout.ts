// The fleet the fleet benchmark (bench/fleet.ts) measures: its clusters and GPU nodes, the same for the
// generated history (history.ts) and the live nodes the simulated APIs serve (clusters.ts), so that
// the nodes of the history are the nodes watched now (a `node` group is `cluster_id/node` in both).
// Deterministic: the same shape always gives the same nodes.
import { mulberry32 } from '../../../sim/random.js';

/** Every history time is relative to this instant (a whole hour, mid-day UTC: the range's edges read hours). */
export const FLEET_NOW = Date.parse('2026-11-01T14:00:00Z');
export const FLEET_SEED = 0xf1ee7;
export const ORGANIZATION = 'acme';
/** The namespace of the running pods in every cluster, labelled for the organization. */
export const NAMESPACE = 'ml';
export const INITIATIVE = 'llm';
export const GPUS_PER_NODE = 8;
/** The first is the home cluster; the others are remote kubeconfigs. */
export const CLUSTER_IDS = ['gpu-a', 'gpu-b', 'gpu-c', 'gpu-d'] as const;

export interface FleetShape {
  /** GPU nodes, split evenly over the clusters. */
  nodes: number;
  /** Days of history before FLEET_NOW. */
  days: number;
  clusters: number;
}

/** Issue 39's scale: 1,250 nodes × 8 GPUs over 4 clusters, 31 days (last_30_days widened to whole hours, and a day more). */
export const FULL_SHAPE: FleetShape = { nodes: 1250, days: 31, clusters: 4 };
export const QUICK_SHAPE: FleetShape = { nodes: 50, days: 3, clusters: 4 };

/** GPU model, the instance types it comes in, and its share of the nodes. */
const HARDWARE = [
  { gpuModel: 'NVIDIA-H100-80GB-HBM3', instanceType: 'p5.48xlarge', share: 0.35 },
  { gpuModel: 'NVIDIA-H100-80GB-HBM3', instanceType: 'a3-highgpu-8g', share: 0.15 },
  { gpuModel: 'NVIDIA-A100-SXM4-80GB', instanceType: 'p4de.24xlarge', share: 0.3 },
  { gpuModel: 'NVIDIA-L40S', instanceType: 'g6e.48xlarge', share: 0.2 },
] as const;

/** How busy each cluster is on average (its share of GPU time allocated). */
const CLUSTER_LOAD = [0.82, 0.7, 0.6, 0.75];

export type LiveState = 'ready' | 'cordoned' | 'not_ready';

export interface FleetNode {
  clusterId: string;
  name: string;
  gpuModel: string;
  instanceType: string;
  /** The cluster's average allocation (0–1), which the node's hours vary around. */
  load: number;
  /** GPUs the device plugin takes out of allocatable, for the whole history and now. */
  unhealthyGpus: number;
  /** Its state now, in the simulated API. */
  state: LiveState;
  /** GPUs of the one running pod on it now (0: none). */
  podGpus: number;
}

export function fleetNodes(shape: FleetShape): FleetNode[] {
  const random = mulberry32(FLEET_SEED);
  const clusters = CLUSTER_IDS.slice(0, shape.clusters);
  const nodes: FleetNode[] = [];
  for (let i = 0; i < shape.nodes; i += 1) {
    const c = Math.floor((i * clusters.length) / shape.nodes);
    const clusterId = clusters[c] ?? CLUSTER_IDS[0];
    const index = i - Math.ceil((c * shape.nodes) / clusters.length);
    let draw = random();
    const hardware = HARDWARE.find((h) => (draw -= h.share) < 0) ?? HARDWARE[0];
    const unhealthyGpus = random() < 0.03 ? 1 : 0;
    const stateDraw = random();
    const state: LiveState = stateDraw < 0.01 ? 'not_ready' : stateDraw < 0.03 ? 'cordoned' : 'ready';
    const busy = random() < (CLUSTER_LOAD[c] ?? 0.7);
    const podGpus = state === 'ready' && busy ? Math.min(GPUS_PER_NODE - unhealthyGpus, [1, 2, 4, 8, 8][Math.floor(random() * 5)] ?? 8) : 0;
    nodes.push({
      clusterId,
      name: `${hardware.instanceType.split('.')[0]}-${String(index).padStart(4, '0')}`,
      gpuModel: hardware.gpuModel,
      instanceType: hardware.instanceType,
      load: CLUSTER_LOAD[c] ?? 0.7,
      unhealthyGpus,
      state,
      podGpus,
    });
  }
  return nodes;
}
