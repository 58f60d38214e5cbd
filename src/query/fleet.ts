// GET /v1/fleet: the organization's GPUs now, whole and by group (cluster, model, pool or node), and
// their GPU-hours over a range (fleet-history.ts), the same groups, and a series.
import type { Scope } from '../access/principal.js';
import type { TrendInterval } from '../domain/trend-interval.js';
import { fleetHistory, type FleetHistoryResult, type FleetHoursFigures } from './fleet-history.js';
import { fleetNodes, type FleetFilters, type FleetNodeView, type FleetReadDeps } from './fleet-nodes.js';
import { fleetGroupKey, type FleetGroupKey } from './fleet-groups.js';
import type { PriceSource, WorkloadIndex } from './ports.js';
import { DEFAULT_STATS_TIME_RANGE, type StatsTimeRange } from './stats-range.js';
import { checkCustomSpan, resolveWindow } from './workload-stats.js';


/** The GPUs of a set of nodes now, whole-GPU equivalents; total = allocated + unallocated + unavailable. */
export interface FleetNowFigures {
  totalGpus: number;
  allocatedGpus: number;
  unallocatedGpus: number;
  unavailableGpus: number;
  nodes: number;
  /** Nodes out of service: cordoned or not ready. */
  nodesUnavailable: number;
}

export interface FleetResult {
  now: FleetNowFigures;
  /** Empty without group_by; by total GPUs descending, then key ascending. Nodes without a model or pool: key ''. */
  groups: (FleetNowFigures & { key: string })[];
}

const NONE: FleetNowFigures = { totalGpus: 0, allocatedGpus: 0, unallocatedGpus: 0, unavailableGpus: 0, nodes: 0, nodesUnavailable: 0 };

function add(figures: FleetNowFigures, node: FleetNodeView): FleetNowFigures {
  return {
    totalGpus: figures.totalGpus + node.totalGpus,
    allocatedGpus: figures.allocatedGpus + node.allocatedGpus,
    unallocatedGpus: figures.unallocatedGpus + node.unallocatedGpus,
    unavailableGpus: figures.unavailableGpus + node.unavailableGpus,
    nodes: figures.nodes + 1,
    nodesUnavailable: figures.nodesUnavailable + (node.state === 'ready' ? 0 : 1),
  };
}

export function fleet(deps: FleetReadDeps, scope: Scope, request: FleetFilters & { groupBy?: FleetGroupKey }): FleetResult {
  const { groupBy, ...filters } = request;
  const nodes = fleetNodes(deps, scope, filters);
  let now = NONE;
  const groups = new Map<string, FleetNowFigures>();
  for (const node of nodes) {
    now = add(now, node);
    if (groupBy === undefined) continue;
    const key = fleetGroupKey(node, groupBy);
    groups.set(key, add(groups.get(key) ?? NONE, node));
  }
  return {
    now,
    groups: [...groups].map(([key, figures]) => ({ key, ...figures }))
      .sort((a, b) => b.totalGpus - a.totalGpus || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}

export interface FleetOverviewRequest extends FleetFilters {
  groupBy?: FleetGroupKey;
  timeRange?: StatsTimeRange;
  startDate?: number;
  endDate?: number;
  interval?: TrendInterval;
}

export interface FleetOverview {
  timeRange: StatsTimeRange;
  now: FleetNowFigures;
  history: FleetHistoryResult;
  /** Every key of the groups now or over the range, by total GPUs now descending, then capacity GPU-hours, then key. */
  groups: { key: string; now: FleetNowFigures; hours: FleetHoursFigures }[];
}

const NO_HOURS: FleetHoursFigures = {
  capacityGpuHours: 0, unavailableGpuHours: 0, allocatedGpuHours: 0, idleGpuHours: 0, unallocatedGpuHours: 0,
  allocationRate: null, utilizationRate: null,
};

/** The fleet now and over the range: what GET /v1/fleet answers. */
export async function fleetOverview(
  deps: FleetReadDeps & { index: Pick<WorkloadIndex, 'fleetHistory' | 'retentionDays'>; prices?: PriceSource; now: number },
  scope: Scope,
  request: FleetOverviewRequest,
): Promise<FleetOverview> {
  const { timeRange = DEFAULT_STATS_TIME_RANGE, startDate, endDate, interval, ...rest } = request;
  const current = fleet(deps, scope, rest);
  const window = resolveWindow(timeRange, { startDate, endDate }, deps.now);
  if (timeRange === 'custom') checkCustomSpan({ startDate, endDate }, deps.now, await deps.index.retentionDays());
  const history = await fleetHistory(
    { index: deps.index, budget: deps.budgets.budgetFor(scope.organizationId), prices: deps.prices?.pricesFor(scope.organizationId) },
    scope.organizationId,
    { window, interval, groupBy: rest.groupBy, clusterId: rest.clusterId, gpuModel: rest.gpuModel, poolId: rest.poolId },
  );
  const nowByKey = new Map(current.groups.map(({ key, ...figures }) => [key, figures]));
  const keys = new Set([...nowByKey.keys(), ...history.groups.keys()]);
  const groups = [...keys].map((key) => ({ key, now: nowByKey.get(key) ?? NONE, hours: history.groups.get(key) ?? NO_HOURS }))
    .sort((a, b) => b.now.totalGpus - a.now.totalGpus || b.hours.capacityGpuHours - a.hours.capacityGpuHours ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { timeRange, now: current.now, history, groups };
}
