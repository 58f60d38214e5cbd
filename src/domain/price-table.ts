// An organization's prices (prices.yaml; docs/capacity.md, "Prices"): a currency, GPU-hour rates that
// match on what a GPU is and where it runs, each in force over a span of time, and an energy rate.
// Rates apply to the time the GPUs were used, so a rate added today with a past effective_from
// re-prices that past: nothing priced is stored, every cost is hours × the rates as they stand.
import type { CapacityType } from './capacity-type.js';

/** What a rate matches on; an absent field matches anything. */
export interface PriceMatch {
  gpuModel?: string;
  instanceType?: string;
  poolId?: string;
  clusterId?: string;
  capacityType?: CapacityType;
}

export const PRICE_MATCH_FIELDS = [
  'gpuModel', 'instanceType', 'poolId', 'clusterId', 'capacityType',
] as const satisfies readonly (keyof PriceMatch)[];

export interface GpuHourRate {
  /** Its place in the file's list, for messages. */
  index: number;
  match: PriceMatch;
  /** Money per whole-GPU hour, in the table's currency. */
  ratePerGpuHour: number;
  /** Epoch ms, a whole UTC hour. */
  effectiveFrom: number;
  /** Epoch ms, a whole UTC hour after effectiveFrom; null: open-ended. */
  effectiveTo: number | null;
}

export interface PriceTable {
  organizationId: string;
  /** ISO 4217 code. */
  currency: string;
  /** The currency's minor units (2 for USD and EUR, 0 for JPY): costs are rounded to them. */
  minorUnits: number;
  gpuHourRates: GpuHourRate[];
  /** Money per kWh; null: energy is not priced. */
  energyRatePerKwh: number | null;
}

/** The facts of GPU time that rates match on. null: not known (no rate naming that field matches it). */
export interface PriceKey {
  gpuModel: string | null;
  instanceType: string;
  poolId: string | null;
  clusterId: string;
  capacityType: CapacityType | null;
}

/** How many fields a rate names: the most specific match wins. */
export function specificity(match: PriceMatch): number {
  return PRICE_MATCH_FIELDS.filter((field) => match[field] !== undefined).length;
}

export function matches(match: PriceMatch, key: PriceKey): boolean {
  return PRICE_MATCH_FIELDS.every((field) => match[field] === undefined || match[field] === key[field]);
}

/** A span of time over which one rate (or none) prices a kind of GPU time (src/domain/rate-segments.ts). */
export interface RateSegment {
  /** Epoch ms; -Infinity for the first span. */
  from: number;
  /** Epoch ms, exclusive; Infinity for the last span. */
  to: number;
  /** Money per whole-GPU hour; null: no rate matches. */
  rate: number | null;
}
