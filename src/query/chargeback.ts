// GET /v1/chargeback: the month's statement for finance (docs/capacity.md, "Chargeback"). It bills by
// time of use, as an invoice does: the GPU time of every pod inside the month, whenever its workload
// was submitted, cut where a rate changes and priced at the rate in force in each span. Each
// workload's idle time and energy are spread over its pods' time in proportion (pricedUsage's
// `usage`), so the idle hours of a span cost that span's rate. The fleet's GPU-hours that nobody held
// are priced as GET /v1/fleet prices them, and billed on a line of their own or spread over the teams.
// Every figure here is exact; the presenter rounds them so that the statement adds up.
import type { Scope } from '../access/principal.js';
import { ApiError } from '../domain/errors.js';
import { HOUR_MS } from '../domain/trend-interval.js';
import { chargebackMonth, type ChargebackMonth } from './chargeback-month.js';
import { fleetHistory } from './fleet-history.js';
import { poolOf } from './fleet-nodes.js';
import type { BudgetSource, PricedUsageRow, PriceSource, WorkloadIndex } from './ports.js';
import { rateOfRow, spansOf, type Span } from './priced-usage.js';

export const CHARGEBACK_GROUP_KEYS = ['submitted_by', 'pool_id', 'gpu_model'] as const;
export type ChargebackGroupKey = (typeof CHARGEBACK_GROUP_KEYS)[number];

export interface ChargebackRequest {
  month: string;
  groupBy?: ChargebackGroupKey;
  /** Spread the unallocated GPU-hours' cost over the rows, in proportion to their cost. */
  shareIdle: boolean;
}

/** A team's month (and its group's, with groupBy). Money is 0 without prices, energy cost 0 without an energy rate. */
export interface ChargebackRow {
  initiativeId: string;
  /** The group's value; null without groupBy, and for the GPU time of no model or outside every pool. */
  key: string | null;
  gpuHours: number;
  /** The GPU time a rate priced × that rate, its idle time included. */
  cost: number;
  energyKwh: number;
  energyCost: number;
  idleGpuHours: number;
  idleCost: number;
  sharedUnallocatedCost: number;
  unpricedGpuHours: number;
}

export interface ChargebackResult extends ChargebackMonth {
  organizationId: string;
  currency: { code: string; minorUnits: number } | null;
  energyPriced: boolean;
  groupBy: ChargebackGroupKey | null;
  shareIdle: boolean;
  /** By total cost descending, then GPU-hours descending, then initiative and key. */
  rows: ChargebackRow[];
  /** `shared`: its cost is in the rows' sharedUnallocatedCost (asked, and some row to carry it). */
  unallocated: { gpuHours: number; cost: number; shared: boolean };
  unpricedGpuHours: number;
}

/** dJ (0.1 J) per kWh, as the index keeps energy. */
const DJ_PER_KWH = 36_000_000;

export async function chargeback(
  deps: { index: WorkloadIndex; budgets: BudgetSource; prices?: PriceSource },
  scope: Scope,
  request: ChargebackRequest,
  now: number,
): Promise<ChargebackResult> {
  // Every team's bill and the fleet's idle hardware: a team's caller would see the others'.
  if (scope.initiatives !== null) throw new ApiError('FORBIDDEN', 'The chargeback bills every team: only an ORG_ADMIN may read it');
  const month = chargebackMonth(request.month, now);
  const prices = deps.prices?.pricesFor(scope.organizationId);
  const budget = deps.budgets.budgetFor(scope.organizationId);
  const spans = monthSpans(month, prices?.changes ?? []);
  const empty = month.to <= month.from;
  const options = { groupBy: request.groupBy === 'submitted_by' ? ('submitted_by' as const) : undefined, usage: { now } };
  const [usage, fleet] = await Promise.all([
    empty ? [] : deps.index.pricedUsage({ scope }, spans, options),
    empty ? undefined : fleetHistory({ index: deps.index, budget, prices }, scope.organizationId, { window: month }),
  ]);
  const keyOf = (row: PricedUsageRow): string | null => {
    switch (request.groupBy) {
      case undefined:
        return null;
      case 'submitted_by':
        return row.key || null;
      case 'gpu_model':
        return row.gpuModel;
      case 'pool_id':
        return poolOf(budget, row.instanceType);
    }
  };
  const byRow = new Map<string, ChargebackRow>();
  for (const row of usage) {
    const key = keyOf(row);
    const id = JSON.stringify([row.initiativeId, key]);
    let entry = byRow.get(id);
    if (entry === undefined) byRow.set(id, (entry = emptyRow(row.initiativeId, key)));
    const hours = row.gpuMs / HOUR_MS;
    // Idle is part of the GPU time it was spread over: a shared GPU's minute is judged whole.
    const idle = Math.min(row.idleGpuMs ?? 0, row.gpuMs) / HOUR_MS;
    const rate = prices === undefined ? null : rateOfRow(row, spans, prices);
    entry.gpuHours += hours;
    entry.idleGpuHours += idle;
    entry.energyKwh += (row.energyDj ?? 0) / DJ_PER_KWH;
    if (rate === null) {
      entry.unpricedGpuHours += hours;
    } else {
      entry.cost += hours * rate;
      entry.idleCost += idle * rate;
    }
  }
  const rows = [...byRow.values()];
  const energyRate = prices?.energyRatePerKwh ?? null;
  if (energyRate !== null) for (const row of rows) row.energyCost = row.energyKwh * energyRate;

  const unallocatedCost = fleet?.summary.cost?.unallocatedCost ?? 0;
  const weights = rows.some((row) => row.cost > 0) ? rows.map((row) => row.cost) : rows.map((row) => row.gpuHours);
  const weight = weights.reduce((sum, w) => sum + w, 0);
  const shared = request.shareIdle && weight > 0;
  if (shared) rows.forEach((row, i) => (row.sharedUnallocatedCost = (unallocatedCost * (weights[i] as number)) / weight));
  rows.sort(byTotalCost);

  return {
    ...month,
    organizationId: scope.organizationId,
    currency: prices === undefined ? null : { code: prices.currency, minorUnits: prices.minorUnits },
    energyPriced: energyRate !== null,
    groupBy: request.groupBy ?? null,
    shareIdle: request.shareIdle,
    rows,
    unallocated: { gpuHours: fleet?.summary.unallocatedGpuHours ?? 0, cost: unallocatedCost, shared },
    unpricedGpuHours: rows.reduce((sum, row) => sum + row.unpricedGpuHours, 0),
  };
}

/**
 * The month cut at every rate change inside it; the time before the first rate is a span of its own,
 * unpriced but still the teams' GPU-hours (spansOf starts at the first rate).
 */
function monthSpans(month: { from: number; to: number }, changes: readonly number[]): Span[] {
  const first = changes[0];
  if (first === undefined || first >= month.to) return [{ from: month.from, to: month.to }];
  const priced = spansOf(month, changes);
  return first > month.from ? [{ from: month.from, to: first }, ...priced] : priced;
}

function emptyRow(initiativeId: string, key: string | null): ChargebackRow {
  return {
    initiativeId, key, gpuHours: 0, cost: 0, energyKwh: 0, energyCost: 0, idleGpuHours: 0, idleCost: 0,
    sharedUnallocatedCost: 0, unpricedGpuHours: 0,
  };
}

const totalOf = (row: ChargebackRow) => row.cost + row.energyCost + row.sharedUnallocatedCost;

/** Also the order the rounding breaks ties in (largest-remainder.ts). A row of no group (null) comes after its team's others. */
function byTotalCost(a: ChargebackRow, b: ChargebackRow): number {
  return totalOf(b) - totalOf(a) || b.gpuHours - a.gpuHours || compare(a.initiativeId, b.initiativeId) || compare(a.key, b.key);
}

/** Text in code-point order, null after every value. */
export function compare(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
