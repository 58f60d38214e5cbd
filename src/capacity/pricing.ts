// The prices of each organization as queries read them: its table in force, with each kind of GPU
// time's rates over time worked out once per table version and kept (a handful of kinds: models ×
// instance types × clusters × capacity types), and the pool found from its budget's instance types.
import type { PriceKey, RateSegment } from '../domain/price-table.js';
import type { BudgetSource, OrganizationPrices, PriceSource } from '../query/ports.js';
import type { ConfigMapPrices } from './configmap-prices.js';
import { rateSegments } from '../domain/rate-segments.js';

/** Kinds of GPU time kept per organization before the cache starts again (a bound against label churn). */
const MAX_KEYS = 10_000;

interface OrganizationCache {
  version: number;
  budget: unknown;
  changes: readonly number[];
  byKey: Map<string, readonly RateSegment[]>;
}

export class Pricing implements PriceSource {
  readonly #prices: ConfigMapPrices;
  readonly #budgets: BudgetSource | undefined;
  readonly #cache = new Map<string, OrganizationCache>();

  constructor(prices: ConfigMapPrices, budgets: BudgetSource | undefined) {
    this.#prices = prices;
    this.#budgets = budgets;
  }

  pricesFor(organizationId: string): OrganizationPrices | undefined {
    const table = this.#prices.tableFor(organizationId);
    if (table === undefined) return undefined;
    const budget = this.#budgets?.budgetFor(organizationId);
    let cached = this.#cache.get(organizationId);
    // A new table, or a new budget (whose pools rates may name), prices every kind anew.
    if (cached?.version !== this.#prices.version || cached.budget !== budget) {
      const times = table.gpuHourRates.flatMap((rate) => [rate.effectiveFrom, ...(rate.effectiveTo === null ? [] : [rate.effectiveTo])]);
      cached = { version: this.#prices.version, budget, changes: [...new Set(times)].sort((a, b) => a - b), byKey: new Map() };
      this.#cache.set(organizationId, cached);
    }
    const byKey = cached.byKey;
    return {
      currency: table.currency,
      minorUnits: table.minorUnits,
      energyRatePerKwh: table.energyRatePerKwh,
      changes: cached.changes,
      segments: (key) => {
        const id = `${key.clusterId}\0${key.instanceType}\0${key.gpuModel ?? ''}\0${key.capacityType ?? ''}`;
        let segments = byKey.get(id);
        if (segments === undefined) {
          const poolId = budget?.pools.find((pool) => pool.instanceTypes.includes(key.instanceType))?.poolId ?? null;
          const full: PriceKey = { ...key, poolId };
          segments = rateSegments(table, full);
          if (byKey.size >= MAX_KEYS) byKey.clear();
          byKey.set(id, segments);
        }
        return segments;
      },
    };
  }
}
