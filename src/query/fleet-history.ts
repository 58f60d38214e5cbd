// The fleet over a range (GET /v1/fleet's summary, groups and series): the organization's history
// (schema v14) summed from whole hours. The range is widened to whole clock hours, the current one
// included up to what its writer has added. Whole UTC days inside it are read from the daily table,
// the hours at its edges from the hourly one, so a month reads a row per node and day. With the
// organization's prices each row is priced too (fleet-cost.ts), and the days inside which a rate
// changes are read by hour.
import type { CapacityBudget } from '../domain/capacity-budget.js';
import { DAY_MS, HOUR_MS } from '../domain/fleet-ledger.js';
import { intervalOf, intervalStart, type TrendInterval } from '../domain/trend-interval.js';
import { validationError } from '../domain/errors.js';
import { addCost, daysCutByChanges, fleetCost, noCost, rowCost, type CostSums, type FleetCost } from './fleet-cost.js';
import { fleetGroupKey, type FleetGroupKey } from './fleet-groups.js';
import { poolOf } from './fleet-nodes.js';
import type { FleetHistoryQuery, FleetHistoryRow, OrganizationPrices, WorkloadIndex } from './ports.js';
import type { Window } from './stats-range.js';

/** GPU-hours of a set of nodes over a range; unallocated = capacity − unavailable − allocated. */
export interface FleetHoursFigures {
  capacityGpuHours: number;
  unavailableGpuHours: number;
  allocatedGpuHours: number;
  idleGpuHours: number;
  unallocatedGpuHours: number;
  /** allocated ÷ (capacity − unavailable); null when nothing was in service. */
  allocationRate: number | null;
  /** (allocated − idle) ÷ capacity; null without capacity. */
  utilizationRate: number | null;
  /** The same GPU-hours in money: only with the organization's prices. */
  cost?: FleetCost;
}

export interface FleetHistoryResult {
  /** The hours read: the range widened to whole hours. */
  window: Window;
  /** With the organization's prices: the currency of every figure's cost. */
  currency?: { code: string; minorUnits: number };
  summary: FleetHoursFigures;
  /** Per group_by key (the same keys as the groups now); empty without group_by. */
  groups: Map<string, FleetHoursFigures>;
  /** With `interval`: every interval of the window, by start, each with its groups when grouped. */
  series: { start: number; figures: FleetHoursFigures; groups: Map<string, FleetHoursFigures> }[] | null;
}

export interface FleetHistoryRequest {
  window: Window;
  interval?: TrendInterval;
  groupBy?: FleetGroupKey;
  clusterId?: string;
  gpuModel?: string;
  poolId?: string;
}

/** Intervals a series may have (as the statistics' series). */
const MAX_INTERVALS: Record<TrendInterval, number> = { hour: 744, day: 1000, week: 1000 };

type Sums = [capacity: number, unavailable: number, allocated: number, idle: number];

/** A summary's, group's or series entry's sums: GPU·ms, and their money with prices. */
interface Totals {
  hours: Sums;
  cost: CostSums | null;
}

/** `prices`: the organization's, when it has some (PriceSource.pricesFor); without them no figure has a cost. */
export async function fleetHistory(
  deps: { index: Pick<WorkloadIndex, 'fleetHistory'>; budget: CapacityBudget | undefined; prices?: OrganizationPrices },
  organizationId: string,
  request: FleetHistoryRequest,
): Promise<FleetHistoryResult> {
  const from = Math.floor(request.window.from / HOUR_MS) * HOUR_MS;
  const to = Math.ceil(request.window.to / HOUR_MS) * HOUR_MS;
  const { interval, groupBy } = request;
  if (interval !== undefined) {
    const count = intervalOf(interval, to - 1) - intervalOf(interval, from) + 1;
    if (count > MAX_INTERVALS[interval]) {
      throw validationError([{
        location: 'query', field: 'interval',
        message: `the range holds ${count.toLocaleString('en-US')} ${interval}s; a series has at most ${MAX_INTERVALS[interval]}`,
      }]);
    }
  }
  const { prices } = deps;
  const base = { organizationId, byNode: groupBy === 'node', clusterId: request.clusterId, gpuModel: request.gpuModel };
  const reads = readsOf(from, to, interval, prices?.changes ?? []);
  const rows = (await Promise.all(reads.map((read) => deps.index.fleetHistory({ ...base, ...read })))).flat();
  const totals = (): Totals => ({ hours: [0, 0, 0, 0], cost: prices === undefined ? null : noCost() });
  const summary = totals();
  const groups = new Map<string, Totals>();
  const series = new Map<number, { totals: Totals; groups: Map<string, Totals> }>();
  const totalsAt = (map: Map<string, Totals>, key: string): Totals => {
    let found = map.get(key);
    if (found === undefined) map.set(key, (found = totals()));
    return found;
  };
  for (const row of rows) {
    const pool = poolOf(deps.budget, row.instanceType);
    if (request.poolId !== undefined && pool !== request.poolId) continue;
    // The same keys as the groups now.
    const node = { clusterId: row.clusterId, name: row.node, gpuModel: row.gpuModel, poolId: pool };
    const key = groupBy === undefined ? null : fleetGroupKey(node, groupBy);
    const cost = prices === undefined ? null : rowCost(row, prices);
    add(summary, row, cost);
    if (key !== null) add(totalsAt(groups, key), row, cost);
    if (interval === undefined) continue;
    const n = intervalOf(interval, row.at);
    let entry = series.get(n);
    if (entry === undefined) series.set(n, (entry = { totals: totals(), groups: new Map() }));
    add(entry.totals, row, cost);
    if (key !== null) add(totalsAt(entry.groups, key), row, cost);
  }
  return {
    window: { from, to },
    ...(prices === undefined ? {} : { currency: { code: prices.currency, minorUnits: prices.minorUnits } }),
    summary: figuresOfTotals(summary),
    groups: figuresOf(groups),
    series: interval === undefined ? null : everyInterval(interval, from, to).map((n) => {
      const entry = series.get(n);
      const entryFigures = figuresOfTotals(entry?.totals ?? totals());
      return { start: intervalStart(interval, n), figures: entryFigures, groups: figuresOf(entry?.groups ?? new Map()) };
    }),
  };
}

type Read = Pick<FleetHistoryQuery, 'grain' | 'from' | 'to'>;

/**
 * The reads of [from, to): whole days from the daily table, unless the series is by hour; the rest by
 * hour, and so are the days inside which a rate changes (`changes`), whose day rows one rate cannot price.
 */
function readsOf(from: number, to: number, interval: TrendInterval | undefined, changes: readonly number[]): Read[] {
  const firstDay = Math.ceil(from / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(to / DAY_MS) * DAY_MS;
  if (interval === 'hour' || firstDay >= lastDay) return [{ grain: 'hour', from, to }];
  const days: Read[] = [];
  const hours: Read[] = [];
  // Neighbouring spans of one grain are one read.
  const push = (reads: Read[], grain: Read['grain'], start: number, end: number) => {
    if (end <= start) return;
    const last = reads.at(-1);
    if (last !== undefined && last.to === start) last.to = end;
    else reads.push({ grain, from: start, to: end });
  };
  let day = firstDay;
  push(hours, 'hour', from, firstDay);
  for (const cut of daysCutByChanges(changes, firstDay, lastDay)) {
    push(days, 'day', day, cut);
    push(hours, 'hour', cut, cut + DAY_MS);
    day = cut + DAY_MS;
  }
  push(days, 'day', day, lastDay);
  push(hours, 'hour', lastDay, to);
  return [...days, ...hours];
}

function everyInterval(interval: TrendInterval, from: number, to: number): number[] {
  const numbers: number[] = [];
  for (let n = intervalOf(interval, from); n <= intervalOf(interval, to - 1); n++) numbers.push(n);
  return numbers;
}

function add(totals: Totals, row: FleetHistoryRow, cost: CostSums | null): void {
  const sums = totals.hours;
  sums[0] += row.capacityMs;
  sums[1] += row.unavailableMs;
  sums[2] += row.allocatedMs;
  sums[3] += row.idleMs;
  if (totals.cost !== null && cost !== null) addCost(totals.cost, cost);
}

function figuresOfTotals(totals: Totals): FleetHoursFigures {
  const hours = figures(totals.hours);
  return totals.cost === null ? hours : { ...hours, cost: fleetCost(totals.cost) };
}

function figuresOf(map: Map<string, Totals>): Map<string, FleetHoursFigures> {
  return new Map([...map].map(([key, totals]) => [key, figuresOfTotals(totals)]));
}

/**
 * GPU·ms to GPU-hours, and the rates from the unrounded sums. Idle is at most allocated: the telemetry
 * judges a shared GPU's minute whole, which a pod holding a share of it would otherwise overstate.
 */
export function figures([capacity, unavailable, allocated, judgedIdle]: Sums): FleetHoursFigures {
  const idle = Math.min(judgedIdle, allocated);
  const inService = capacity - unavailable;
  return {
    capacityGpuHours: capacity / HOUR_MS,
    unavailableGpuHours: unavailable / HOUR_MS,
    allocatedGpuHours: allocated / HOUR_MS,
    idleGpuHours: idle / HOUR_MS,
    unallocatedGpuHours: Math.max(0, capacity - unavailable - allocated) / HOUR_MS,
    allocationRate: inService > 0 ? allocated / inService : null,
    utilizationRate: capacity > 0 ? Math.max(0, allocated - idle) / capacity : null,
  };
}
