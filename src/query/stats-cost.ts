// What the workloads of a statistic cost (docs/api.md, "Cost" under Statistics). Statistics count a
// workload by its submission, so its cost is all of its GPU time, whenever it ran: the time from the
// range's start to now is cut at every rate change, and each workload's pods are priced per span as a
// workload's own cost is. Idle GPU-time is priced at the rates of the time it is spread over
// (pricedUsage's `usage`): a workload's idle minutes cost what its GPU-time cost on average.
import type { TrendInterval } from '../domain/trend-interval.js';
import { HOUR_MS } from '../domain/trend-interval.js';
import type { OrganizationPrices, PricedUsageRow, StatsGroupKey, WorkloadFilter, WorkloadIndex } from './ports.js';
import { rateOfRow, spansOf, type Span } from './priced-usage.js';

/** Cost beside a statistic's GPU-hours; unpriced hours are its GPU-hours that no rate covered. */
export interface CostFigures {
  cost: number;
  idleCost: number;
  pricedGpuHours: number;
}

export interface StatsCost {
  currency: string;
  minorUnits: number;
  summary: CostFigures;
  /** By group key (the statistics' '' for none). */
  groups: Map<string, CostFigures>;
  /** By seriesKey(start, key), when an interval was asked. */
  series: Map<string, CostFigures>;
}

export const seriesKey = (start: number, key: string | null) => `${start}|${key ?? ''}`;

export async function statsCost(
  index: WorkloadIndex,
  prices: OrganizationPrices,
  filter: WorkloadFilter,
  options: { groupBy: StatsGroupKey | null; interval?: TrendInterval; from: number; now: number },
): Promise<StatsCost> {
  const { groupBy, interval, now } = options;
  // A workload's pods start after its submission, inside the range, and may run up to now.
  const spans = spansOf({ from: options.from, to: now + 1 }, prices.changes);
  const rows = spans.length === 0
    ? []
    : await index.pricedUsage(filter, spans, { groupBy: groupBy ?? undefined, interval, usage: { now } });
  return costOfRows(rows, spans, prices);
}

function costOfRows(rows: readonly PricedUsageRow[], spans: readonly Span[], prices: OrganizationPrices): StatsCost {
  const result: StatsCost = {
    currency: prices.currency, minorUnits: prices.minorUnits, summary: noCost(), groups: new Map(), series: new Map(),
  };
  for (const row of rows) {
    const rate = rateOfRow(row, spans, prices);
    if (rate === null) continue;
    const hours = row.gpuMs / HOUR_MS;
    const part: CostFigures = { cost: hours * rate, idleCost: ((row.idleGpuMs ?? 0) / HOUR_MS) * rate, pricedGpuHours: hours };
    addTo(result.summary, part);
    if (row.key !== undefined) addTo(entry(result.groups, row.key), part);
    if (row.submittedIn !== undefined) addTo(entry(result.series, seriesKey(row.submittedIn, row.key ?? null)), part);
  }
  return result;
}

export function noCost(): CostFigures {
  return { cost: 0, idleCost: 0, pricedGpuHours: 0 };
}

function entry(map: Map<string, CostFigures>, key: string): CostFigures {
  let figures = map.get(key);
  if (figures === undefined) map.set(key, (figures = noCost()));
  return figures;
}

function addTo(into: CostFigures, part: CostFigures): void {
  into.cost += part.cost;
  into.idleCost += part.idleCost;
  into.pricedGpuHours += part.pricedGpuHours;
}
