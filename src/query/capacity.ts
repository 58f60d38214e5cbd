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
import type {
  BudgetSource, FleetSource, OrganizationPrices, PriceSource, UsageBreakdown, WorkloadFilter, WorkloadIndex,
} from './ports.js';
import { priceUsage, spansOf, zero, type Money, type PricedUsage } from './priced-usage.js';

export interface CapacityRequest {
  initiativeId?: string;
  poolId?: string;
}

export interface CapacityResult {
  organizationId: string;
  period: BudgetPeriod;
  periodStart: number | null;
  /** Present with the organization's prices (docs/api.md, "Cost"): the currency of every entry's `cost`. */
  currency?: { code: string; minorUnits: number };
  summary: CapacityFigures & WithCost & { currentActiveGpus: number };
  pools: (CapacityFigures & WithCost & PoolHardware & { poolId: string; name: string; instanceTypes: string[] })[];
  initiatives: (CapacityFigures & WithCost & { initiativeId: string; name: string })[];
}

/** The same figures in money, with prices: allocated null when the budget states no allocated_cost. */
export interface EntryCost {
  figures: CapacityFigures;
  allocated: number | null;
  unpricedGpuHours: number;
}

interface WithCost {
  cost?: EntryCost;
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
  deps: { index: WorkloadIndex; budgets: BudgetSource; fleet?: FleetSource; prices?: PriceSource },
  scope: Scope,
  request: CapacityRequest,
  now: number,
): Promise<CapacityResult> {
  const filter = scopedFilter(scope, { initiativeId: request.initiativeId });
  const budget = deps.budgets.budgetFor(scope.organizationId);
  const period = budget?.period ?? 'total';
  const from = periodStart(period, now);
  const prices = deps.prices?.pricesFor(scope.organizationId);
  const [usage, trailing, currentActiveGpus, money] = await Promise.all([
    deps.index.usage(filter, { from, to: now }),
    deps.index.usage(filter, { from: burnWindowStart(now), to: now }),
    deps.index.activeGpus(filter),
    prices === undefined ? undefined : pricedWindows(deps.index, filter, prices, { from, to: now }),
  ]);
  const end = periodEnd(period, now);
  const figures = figuresAt({ budgeted: budget !== undefined, now, periodEnd: end });
  const costOf = (allocated: number | undefined, used: number, pick: (p: PricedUsage) => Money): { cost?: EntryCost } => {
    if (money === undefined) return {};
    const inPeriod = pick(money.period);
    return {
      cost: {
        figures: figures(allocated ?? 0, inPeriod.cost, pick(money.trailing).cost),
        allocated: allocated ?? null,
        unpricedGpuHours: Math.max(0, used - inPeriod.pricedGpuHours),
      },
    };
  };
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
  const costed = initiatives.filter((i) => i.allocatedCost !== undefined);
  const allocatedCost = narrowed
    ? costed.length === 0 ? undefined : costed.reduce((sum, i) => sum + (i.allocatedCost ?? 0), 0)
    : budget?.allocatedCost;

  return {
    organizationId: scope.organizationId,
    period,
    periodStart: from,
    ...(prices === undefined ? {} : { currency: { code: prices.currency, minorUnits: prices.minorUnits } }),
    summary: {
      ...figures(allocated, usage.total, trailing.total),
      currentActiveGpus,
      ...costOf(allocatedCost, usage.total, (p) => p.total),
    },
    pools: pools.map((p) => ({
      poolId: p.poolId,
      name: p.name,
      instanceTypes: [...p.instanceTypes],
      ...figures(p.allocatedGpuHours, ofInstanceTypes(usage, p.instanceTypes), ofInstanceTypes(trailing, p.instanceTypes)),
      ...hardware(p.allocatedGpuHours, p.instanceTypes),
      ...costOf(p.allocatedCost, ofInstanceTypes(usage, p.instanceTypes), (priced) => moneyOf(priced.byInstanceType, p.instanceTypes)),
    })),
    initiatives: initiatives.map((i) => ({
      initiativeId: i.initiativeId,
      name: i.name,
      ...figures(i.allocatedGpuHours, usage.byInitiative.get(i.initiativeId) ?? 0, trailing.byInitiative.get(i.initiativeId) ?? 0),
      ...costOf(i.allocatedCost, usage.byInitiative.get(i.initiativeId) ?? 0, (p) => p.byInitiative.get(i.initiativeId) ?? zero()),
    })),
  };
}

/** The period's and the trailing week's GPU time priced, from one read of the index. */
async function pricedWindows(
  index: WorkloadIndex,
  filter: WorkloadFilter,
  prices: OrganizationPrices,
  window: { from: number | null; to: number },
): Promise<{ period: PricedUsage; trailing: PricedUsage }> {
  const period = spansOf(window, prices.changes);
  const trailing = spansOf({ from: burnWindowStart(window.to), to: window.to }, prices.changes);
  const rows = await index.pricedUsage(filter, [...period, ...trailing]);
  return {
    period: priceUsage(rows.filter((row) => row.span < period.length), period, prices),
    trailing: priceUsage(
      rows.filter((row) => row.span >= period.length).map((row) => ({ ...row, span: row.span - period.length })),
      trailing,
      prices,
    ),
  };
}

function moneyOf(byInstanceType: ReadonlyMap<string, Money>, instanceTypes: readonly string[]): Money {
  const sum = zero();
  for (const type of instanceTypes) {
    const part = byInstanceType.get(type);
    if (part === undefined) continue;
    sum.cost += part.cost;
    sum.pricedGpuHours += part.pricedGpuHours;
  }
  return sum;
}

function ofInstanceTypes(usage: UsageBreakdown, instanceTypes: readonly string[]): number {
  return instanceTypes.reduce((sum, t) => sum + (usage.byInstanceType.get(t) ?? 0), 0);
}
