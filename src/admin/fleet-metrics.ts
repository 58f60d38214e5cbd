// Prometheus series of the fleet, read at scrape time from the live nodes: the GPUs of each cluster
// and model by how they split now (allocated, unallocated, unavailable: they add up to the GPUs
// there), and the GPU nodes by state. Models are few and clusters are few, so the series stay few
// whatever the number of nodes.
import type { Registry } from 'prom-client';
import { gpuSplit, NODE_STATES, type FleetNode } from '../domain/fleet.js';
import { gaugeFrom } from './collected-metrics.js';

export interface FleetMetricSources {
  /** Every GPU node of every watched cluster, whatever its organization. */
  nodes: () => readonly FleetNode[];
}

const SPLIT_STATES = ['allocated', 'unallocated', 'unavailable'] as const;

export function registerFleetMetrics(registry: Registry, sources: FleetMetricSources): void {
  gaugeFrom(
    registry,
    'gpucap_fleet_gpus',
    'Physical GPUs of the GPU nodes now, whole-GPU equivalents, by cluster, model (GFD product, \'\' when unlabelled) ' +
      'and state: allocated to running pods, unallocated, or unavailable (free on a cordoned or not ready node, or unhealthy)',
    ['cluster_id', 'gpu_model', 'state'],
    () => {
      const sums = new Map<string, { cluster: string; model: string; split: Record<(typeof SPLIT_STATES)[number], number> }>();
      for (const node of sources.nodes()) {
        const model = node.gpuModel ?? '';
        const key = JSON.stringify([node.clusterId, model]);
        let entry = sums.get(key);
        if (entry === undefined) {
          entry = { cluster: node.clusterId, model, split: { allocated: 0, unallocated: 0, unavailable: 0 } };
          sums.set(key, entry);
        }
        const split = gpuSplit(node);
        entry.split.allocated += split.allocatedGpus;
        entry.split.unallocated += split.unallocatedGpus;
        entry.split.unavailable += split.unavailableGpus;
      }
      return [...sums.values()].flatMap(({ cluster, model, split }) =>
        SPLIT_STATES.map((state) => ({ labels: { cluster_id: cluster, gpu_model: model, state }, value: split[state] })));
    },
  );
  const nodesHelp = 'GPU nodes now, by cluster and state (ready, cordoned, not_ready)';
  gaugeFrom(registry, 'gpucap_fleet_nodes', nodesHelp, ['cluster_id', 'state'], () => {
    const counts = new Map<string, Record<string, number>>();
    for (const node of sources.nodes()) {
      let byState = counts.get(node.clusterId);
      if (byState === undefined) counts.set(node.clusterId, (byState = Object.fromEntries(NODE_STATES.map((state) => [state, 0]))));
      byState[node.state] = (byState[node.state] ?? 0) + 1;
    }
    return [...counts].flatMap(([cluster, byState]) =>
      NODE_STATES.map((state) => ({ labels: { cluster_id: cluster, state }, value: byState[state] ?? 0 })));
  });
}
