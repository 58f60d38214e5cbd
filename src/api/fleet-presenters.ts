// The fleet's results → JSON: snake_case, GPUs to 4 decimals (presenters.ts does the same for workloads),
// money to the currency's minor units.
import type { FleetNowFigures, FleetOverview } from '../query/fleet.js';
import { NO_FLEET_COST, type FleetCost } from '../query/fleet-cost.js';
import type { FleetHoursFigures } from '../query/fleet-history.js';
import type { FleetNodeView } from '../query/fleet-nodes.js';
import { money, round } from './presenters.js';

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

const hours = (value: number) => round(value, 4);
const rate = (value: number | null) => (value === null ? null : round(value, 4));

function presentHours(figures: FleetHoursFigures) {
  return {
    capacity_gpu_hours: hours(figures.capacityGpuHours),
    unavailable_gpu_hours: hours(figures.unavailableGpuHours),
    allocated_gpu_hours: hours(figures.allocatedGpuHours),
    idle_gpu_hours: hours(figures.idleGpuHours),
    unallocated_gpu_hours: hours(figures.unallocatedGpuHours),
    allocation_rate: rate(figures.allocationRate),
    utilization_rate: rate(figures.utilizationRate),
  };
}

/**
 * Each figure rounded on its own from its unrounded sum, so Σ groups and Σ series may differ from
 * the summary by a minor unit per entry. A group with nodes now and no history has no cost: 0.
 */
function presentCost(cost: FleetCost | undefined, minorUnits: number) {
  const c = cost ?? NO_FLEET_COST;
  return {
    capacity_cost: money(c.capacityCost, minorUnits),
    allocated_cost: money(c.allocatedCost, minorUnits),
    idle_cost: money(c.idleCost, minorUnits),
    unallocated_cost: money(c.unallocatedCost, minorUnits),
    unpriced_gpu_hours: hours(c.unpricedGpuHours),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

export function presentFleet(result: FleetOverview) {
  const { currency } = result.history;
  // Without prices no cost field, so the answer is what it was.
  const hoursOf = (figures: FleetHoursFigures) =>
    currency === undefined ? presentHours(figures) : { ...presentHours(figures), ...presentCost(figures.cost, currency.minorUnits) };
  const grouped = result.groups.map((group) => ({ key: group.key, ...presentNow(group.now), ...hoursOf(group.hours) }));
  const series = result.history.series?.map((entry) => ({
    start: iso(entry.start),
    ...hoursOf(entry.figures),
    ...(entry.groups.size === 0 ? {} : {
      grouped: [...entry.groups].map(([key, figures]) => ({ key, ...hoursOf(figures) }))
        .sort((a, b) => b.capacity_gpu_hours - a.capacity_gpu_hours || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    }),
  }));
  return {
    ...(currency === undefined ? {} : { currency: currency.code }),
    time_range: result.timeRange,
    start: iso(result.history.window.from),
    end: iso(result.history.window.to),
    now: presentNow(result.now),
    summary: hoursOf(result.history.summary),
    grouped,
    ...(series === undefined ? {} : { series }),
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
