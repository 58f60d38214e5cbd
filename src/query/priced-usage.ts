// The cost of the GPU time inside a window (docs/api.md, "Cost"): the window is cut wherever any rate
// of the organization starts or stops, the index sums GPU-ms per span, initiative and kind of GPU time
// (pricedUsage), and each sum is priced at the one rate its kind has in its span. Before the first
// rate every hour is unpriced, so no span reaches before it.
import { HOUR_MS } from '../domain/trend-interval.js';
import type { OrganizationPrices, PricedUsageRow } from './ports.js';

export interface Span {
  from: number;
  to: number;
}

/** [from, to) cut at every change inside it; from the first change on when `from` is null or earlier. */
export function spansOf(window: { from: number | null; to: number }, changes: readonly number[]): Span[] {
  const first = changes[0];
  if (first === undefined) return [];
  const from = Math.max(window.from ?? first, first);
  if (!(window.to > from)) return [];
  const cuts = [from, ...changes.filter((at) => at > from && at < window.to), window.to];
  return cuts.slice(1).map((to, i) => ({ from: cuts[i] as number, to }));
}

export interface Money {
  cost: number;
  /** The GPU-hours a rate priced: the window's others (no rate for their kind, or before the first rate) are unpriced. */
  pricedGpuHours: number;
}

export interface PricedUsage {
  total: Money;
  byInitiative: Map<string, Money>;
  byInstanceType: Map<string, Money>;
}

/** The rows priced, in total, per initiative and per instance type. */
export function priceUsage(rows: readonly PricedUsageRow[], spans: readonly Span[], prices: OrganizationPrices): PricedUsage {
  const result: PricedUsage = { total: zero(), byInitiative: new Map(), byInstanceType: new Map() };
  for (const row of rows) {
    const rate = rateOfRow(row, spans, prices);
    const hours = row.gpuMs / HOUR_MS;
    if (rate === null) continue;
    const part: Money = { cost: hours * rate, pricedGpuHours: hours };
    add(result.total, part);
    add(entry(result.byInitiative, row.initiativeId), part);
    add(entry(result.byInstanceType, row.instanceType), part);
  }
  return result;
}

/** The one rate the row's kind has in its span; null when none covers it. */
export function rateOfRow(row: PricedUsageRow, spans: readonly Span[], prices: OrganizationPrices): number | null {
  const span = spans[row.span];
  if (span === undefined) return null;
  return prices.segments(row).find((segment) => segment.from <= span.from && span.from < segment.to)?.rate ?? null;
}

export function zero(): Money {
  return { cost: 0, pricedGpuHours: 0 };
}

function entry(map: Map<string, Money>, key: string): Money {
  let money = map.get(key);
  if (money === undefined) map.set(key, (money = zero()));
  return money;
}

function add(into: Money, part: Money): void {
  into.cost += part.cost;
  into.pricedGpuHours += part.pricedGpuHours;
}
