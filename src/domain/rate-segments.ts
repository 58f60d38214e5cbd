// The rate in force for one kind of GPU time, as a line of spans: each rate of the table that matches
// the key holds from its effective_from to its effective_to, and where several hold, the most
// specific wins (validation leaves no ties between rates that can match one key). Between the rates,
// or before the first, GPU time is unpriced.
import { HOUR_MS } from './trend-interval.js';
import { matches, specificity, type PriceKey, type PriceTable, type RateSegment } from './price-table.js';

/** The spans cover all time, in order, neighbours with different rates. */
export function rateSegments(table: PriceTable, key: PriceKey): RateSegment[] {
  const candidates = table.gpuHourRates.filter((rate) => matches(rate.match, key));
  const times = candidates.flatMap((rate) => (rate.effectiveTo === null ? [rate.effectiveFrom] : [rate.effectiveFrom, rate.effectiveTo]));
  const bounds = [...new Set(times)].sort((a, b) => a - b);
  const edges = [-Infinity, ...bounds, Infinity];
  const segments: RateSegment[] = [];
  for (let i = 0; i + 1 < edges.length; i += 1) {
    const from = edges[i] as number;
    const to = edges[i + 1] as number;
    let best: { rate: number; specificity: number } | null = null;
    for (const rate of candidates) {
      const inForce = rate.effectiveFrom <= from && (rate.effectiveTo === null || to <= rate.effectiveTo);
      const weight = specificity(rate.match);
      if (inForce && (best === null || weight > best.specificity)) best = { rate: rate.ratePerGpuHour, specificity: weight };
    }
    const value = best?.rate ?? null;
    const last = segments.at(-1);
    if (last !== undefined && last.rate === value) last.to = to;
    else segments.push({ from, to, rate: value });
  }
  return segments;
}

export interface PricedTime {
  /** Money for the priced part. */
  cost: number;
  /** Whole-GPU hours that no rate priced. */
  unpricedGpuHours: number;
}

/** `gpus` whole-GPU equivalents held over [from, to), priced by the spans. */
export function priceInterval(segments: readonly RateSegment[], gpus: number, from: number, to: number): PricedTime {
  let cost = 0;
  let unpriced = 0;
  if (!(to > from) || gpus <= 0) return { cost, unpricedGpuHours: unpriced };
  for (const segment of segments) {
    if (segment.to <= from) continue;
    if (segment.from >= to) break;
    const hours = (gpus * (Math.min(to, segment.to) - Math.max(from, segment.from))) / HOUR_MS;
    if (segment.rate === null) unpriced += hours;
    else cost += hours * segment.rate;
  }
  return { cost, unpricedGpuHours: unpriced };
}
