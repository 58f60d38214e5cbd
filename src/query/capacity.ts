// GET /v1/capacity: allocated, used and remaining GPU-hours of the current budget period.
// Every `used` figure covers only what the caller may see (and the initiative_id filter): pools stay
// visible to team callers with their allocation, but an organization-wide pool `used` would reveal
// other teams' consumption, exactly per instance type for a single-type pool. The forecasts read the
// trailing week with the same filter, so they cover the same workloads as `used`.
import { burnWindowStart } from '../capacity/budget-forecast.js';
import { figuresAt, type CapacityFigures } from '../capacity/budget-figures.js';
import { periodEnd, periodStart } from '../capacity/budget-period.js';
import type { BudgetPeriod } from '../domain/capacity-budget.js';
import { canSeeInitiative, type Scope } from '../access/principal.js';
import { HOUR_MS } from '../domain/trend-interval.js';
import { scopedFilter } from '../access/scoped-filter.js';
import type { BudgetSource, FleetSource, UsageBreakdown, WorkloadIndex } from './ports.js';

export interface CapacityRequest {
  initiativeId?: string;
  poolId?: string;
}

export interface CapacityResult {
  organizationId: string;
  period: BudgetPeriod;
  periodStart: number | null;
  summary: CapacityFigures & { currentActiveGpus: number };
  pools: (CapacityFigures & PoolHardware & { poolId: string; name: string; instanceTypes: string[] })[];
  initiatives: (CapacityFigures & { initiativeId: string; name: string })[];
}

/** A pool's budget against its hardware (docs/fleet.md, "Budgets against hardware"). */
export interface PoolHardware {
  /**
   * The pool's nodes' physical GPUs × the whole period, as if today's nodes stayed; null for a period
   * without end, or when the service sees no GPU node of the organization.
   */
  capacityGpuHoursInPeriod: number | null;
  /** The allocation is more than that hardware can give in the period. */
  overCommitted: boolean;
}

/** `fleet` gives the pools their hardware; without it (the admin port's gauges) none is counted. */
export async function capacity(
  deps: { index: WorkloadIndex; budgets: BudgetSource; fleet?: FleetSource },
  scope: Scope,
  request: CapacityRequest,
  now: number,
): Promise<CapacityResult> {
  const filter = scopedFilter(scope, { initiativeId: request.initiativeId });
  const budget = deps.budgets.budgetFor(scope.organizationId);
  const period = budget?.period ?? 'total';
  const from = periodStart(period, now);
  const [usage, trailing, currentActiveGpus] = await Promise.all([
    deps.index.usage(filter, { from, to: now }),
    deps.index.usage(filter, { from: burnWindowStart(now), to: now }),
    deps.index.activeGpus(filter),
  ]);
  const end = periodEnd(period, now);
  const figures = figuresAt({ budgeted: budget !== undefined, now, periodEnd: end });
  const nodes = deps.fleet?.nodes(scope.organizationId) ?? [];
  const hardware = (allocated: number, instanceTypes: readonly string[]): PoolHardware => {
    // No GPU node of the organization at all: no cluster is watched (or listed yet), not a fleet of none.
    if (from === null || end === null || nodes.length === 0) return { capacityGpuHoursInPeriod: null, overCommitted: false };
    const gpus = nodes.filter((node) => instanceTypes.includes(node.instanceType)).reduce((sum, node) => sum + node.totalGpus, 0);
    const hours = (gpus * (end - from)) / HOUR_MS;
    return { capacityGpuHoursInPeriod: hours, overCommitted: allocated > hours };
  };

  const budgetPools = budget?.pools ?? [];
  // A pool_id that names no pool narrows to nothing, like every other filter (docs/api.md "Filters").
  const pools = budgetPools.filter((p) => request.poolId === undefined || p.poolId === request.poolId);

  const initiatives = (budget?.initiatives ?? []).filter(
    (i) => canSeeInitiative(scope, i.initiativeId) && (request.initiativeId === undefined || i.initiativeId === request.initiativeId),
  );
  const narrowed = scope.initiatives !== null || request.initiativeId !== undefined;
  const allocated = !budget ? 0 : narrowed ? initiatives.reduce((sum, i) => sum + i.allocatedGpuHours, 0) : budget.allocatedGpuHours;

  return {
    organizationId: scope.organizationId,
    period,
    periodStart: from,
    summary: { ...figures(allocated, usage.total, trailing.total), currentActiveGpus },
    pools: pools.map((p) => ({
      poolId: p.poolId,
      name: p.name,
      instanceTypes: [...p.instanceTypes],
      ...figures(p.allocatedGpuHours, ofInstanceTypes(usage, p.instanceTypes), ofInstanceTypes(trailing, p.instanceTypes)),
      ...hardware(p.allocatedGpuHours, p.instanceTypes),
    })),
    initiatives: initiatives.map((i) => ({
      initiativeId: i.initiativeId,
      name: i.name,
      ...figures(i.allocatedGpuHours, usage.byInitiative.get(i.initiativeId) ?? 0, trailing.byInitiative.get(i.initiativeId) ?? 0),
    })),
  };
}

function ofInstanceTypes(usage: UsageBreakdown, instanceTypes: readonly string[]): number {
  return instanceTypes.reduce((sum, t) => sum + (usage.byInstanceType.get(t) ?? 0), 0);
}
