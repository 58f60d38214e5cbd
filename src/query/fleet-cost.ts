// The fleet's GPU-hours in money (docs/fleet.md, "Cost"): each row of the history is priced at the
// rate its kind of GPU (cluster, instance type, model, capacity type, and the pool pricing finds for
// the instance type) has in the row's bucket. An hour row lies inside one rate, since rates change
// on whole UTC hours. A day row lies inside one rate unless some rate starts or stops inside that
// day, and a day row cannot be cut (its hours are summed): those days are read from the hourly
// table instead (daysCutByChanges), so every row has one rate and none is prorated by guess.
import { DAY_MS, HOUR_MS } from '../domain/fleet-ledger.js';
import type { RateSegment } from '../domain/price-table.js';
import type { FleetHistoryRow, OrganizationPrices } from './ports.js';

/** Money over a range, unrounded; the API rounds each figure to the currency's minor units. */
export interface FleetCost {
  /** Every GPU-hour of capacity that a rate priced: the fleet's whole bill. */
  capacityCost: number;
  allocatedCost: number;
  idleCost: number;
  unallocatedCost: number;
  /** GPU-hours of capacity no rate priced; none of the costs counts them. */
  unpricedGpuHours: number;
}

/** GPU·ms × rate of capacity, allocated, idle and unallocated, and the GPU·ms of capacity unpriced. */
export type CostSums = [capacity: number, allocated: number, idle: number, unallocated: number, unpricedMs: number];

export const noCost = (): CostSums => [0, 0, 0, 0, 0];

export const NO_FLEET_COST: FleetCost = { capacityCost: 0, allocatedCost: 0, idleCost: 0, unallocatedCost: 0, unpricedGpuHours: 0 };

/**
 * One row's part. Idle and unallocated are taken per row, as the GPU-hours are over the sums: idle
 * at most allocated (a shared GPU's minute is judged whole), unallocated what is left in service.
 */
export function rowCost(row: FleetHistoryRow, prices: OrganizationPrices): CostSums {
  const rate = rateAt(prices.segments(row), row.at);
  if (rate === null) return [0, 0, 0, 0, row.capacityMs];
  const idle = Math.min(row.idleMs, row.allocatedMs);
  const unallocated = Math.max(0, row.capacityMs - row.unavailableMs - row.allocatedMs);
  return [row.capacityMs * rate, row.allocatedMs * rate, idle * rate, unallocated * rate, 0];
}

export function addCost(into: CostSums, part: CostSums): void {
  for (let i = 0; i < into.length; i++) into[i] = (into[i] as number) + (part[i] as number);
}

export function fleetCost([capacity, allocated, idle, unallocated, unpriced]: CostSums): FleetCost {
  return {
    capacityCost: capacity / HOUR_MS,
    allocatedCost: allocated / HOUR_MS,
    idleCost: idle / HOUR_MS,
    unallocatedCost: unallocated / HOUR_MS,
    unpricedGpuHours: unpriced / HOUR_MS,
  };
}

/** The UTC days of [firstDay, lastDay) inside which (not at whose midnight) some rate starts or stops. */
export function daysCutByChanges(changes: readonly number[], firstDay: number, lastDay: number): number[] {
  const days = changes.filter((at) => at > firstDay && at < lastDay && at % DAY_MS !== 0).map((at) => Math.floor(at / DAY_MS) * DAY_MS);
  return [...new Set(days)];
}

function rateAt(segments: readonly RateSegment[], at: number): number | null {
  return segments.find((segment) => segment.from <= at && at < segment.to)?.rate ?? null;
}
