// The fleet over a range (GET /v1/fleet's summary, groups and series): the organization's history
// (schema v14) summed from whole hours. The range is widened to whole clock hours, the current one
// included up to what its writer has added. Whole UTC days inside it are read from the daily table,
// the hours at its edges from the hourly one, so a month reads a row per node and day.
import type { CapacityBudget } from '../domain/capacity-budget.js';
import { DAY_MS, HOUR_MS } from '../domain/fleet-ledger.js';
import { intervalOf, intervalStart, type TrendInterval } from '../domain/trend-interval.js';
import { validationError } from '../domain/errors.js';
import { fleetGroupKey, type FleetGroupKey } from './fleet-groups.js';
import { poolOf } from './fleet-nodes.js';
import type { FleetHistoryQuery, FleetHistoryRow, WorkloadIndex } from './ports.js';
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
}

export interface FleetHistoryResult {
  /** The hours read: the range widened to whole hours. */
  window: Window;
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

export async function fleetHistory(
  deps: { index: Pick<WorkloadIndex, 'fleetHistory'>; budget: CapacityBudget | undefined },
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
  const base = { organizationId, byNode: groupBy === 'node', clusterId: request.clusterId, gpuModel: request.gpuModel };
  const rows = (await Promise.all(readsOf(from, to, interval).map((read) => deps.index.fleetHistory({ ...base, ...read })))).flat();
  const summary: Sums = [0, 0, 0, 0];
  const groups = new Map<string, Sums>();
  const series = new Map<number, { sums: Sums; groups: Map<string, Sums> }>();
  for (const row of rows) {
    const pool = poolOf(deps.budget, row.instanceType);
    if (request.poolId !== undefined && pool !== request.poolId) continue;
    // The same keys as the groups now.
    const node = { clusterId: row.clusterId, name: row.node, gpuModel: row.gpuModel, poolId: pool };
    const key = groupBy === undefined ? null : fleetGroupKey(node, groupBy);
    add(summary, row);
    if (key !== null) add(sumsAt(groups, key), row);
    if (interval === undefined) continue;
    const n = intervalOf(interval, row.at);
    let entry = series.get(n);
    if (entry === undefined) series.set(n, (entry = { sums: [0, 0, 0, 0], groups: new Map() }));
    add(entry.sums, row);
    if (key !== null) add(sumsAt(entry.groups, key), row);
  }
  return {
    window: { from, to },
    summary: figures(summary),
    groups: figuresOf(groups),
    series: interval === undefined ? null : everyInterval(interval, from, to).map((n) => {
      const entry = series.get(n);
      const sums: Sums = entry?.sums ?? [0, 0, 0, 0];
      return { start: intervalStart(interval, n), figures: figures(sums), groups: figuresOf(entry?.groups ?? new Map()) };
    }),
  };
}

/** The reads of [from, to): whole days from the daily table, unless the series is by hour; the rest by hour. */
function readsOf(from: number, to: number, interval: TrendInterval | undefined): Pick<FleetHistoryQuery, 'grain' | 'from' | 'to'>[] {
  const firstDay = Math.ceil(from / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(to / DAY_MS) * DAY_MS;
  if (interval === 'hour' || firstDay >= lastDay) return [{ grain: 'hour', from, to }];
  const reads: Pick<FleetHistoryQuery, 'grain' | 'from' | 'to'>[] = [{ grain: 'day', from: firstDay, to: lastDay }];
  if (from < firstDay) reads.push({ grain: 'hour', from, to: firstDay });
  if (lastDay < to) reads.push({ grain: 'hour', from: lastDay, to });
  return reads;
}

function everyInterval(interval: TrendInterval, from: number, to: number): number[] {
  const numbers: number[] = [];
  for (let n = intervalOf(interval, from); n <= intervalOf(interval, to - 1); n++) numbers.push(n);
  return numbers;
}

function sumsAt(map: Map<string, Sums>, key: string): Sums {
  let sums = map.get(key);
  if (sums === undefined) map.set(key, (sums = [0, 0, 0, 0]));
  return sums;
}

function add(sums: Sums, row: FleetHistoryRow): void {
  sums[0] += row.capacityMs;
  sums[1] += row.unavailableMs;
  sums[2] += row.allocatedMs;
  sums[3] += row.idleMs;
}

function figuresOf(map: Map<string, Sums>): Map<string, FleetHoursFigures> {
  return new Map([...map].map(([key, sums]) => [key, figures(sums)]));
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
