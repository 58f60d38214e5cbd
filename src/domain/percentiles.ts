// The percentiles GET /v1/workloads/{id}/metrics adds to each metric on request (`pNN`), and what one
// means: the nearest-rank percentile, which is always one of the values it is taken from (never an
// interpolation between two of them), so a percentile of integer-percent utilizations is one too.

/** The percentiles a client may ask for: few enough to name in the contract, the ones dashboards plot. */
export const PERCENTILES = [50, 75, 90, 95, 99] as const;
export type Percentile = (typeof PERCENTILES)[number];
export type PercentileKey = `p${Percentile}`;

export function percentileKey(percentile: Percentile): PercentileKey {
  return `p${percentile}`;
}

/**
 * The 1-based rank of the `percentile`-th percentile among `count` ordered values (count ≥ 1):
 * ⌈percentile × count / 100⌉. The product first, exact in integers, then one division: a fraction
 * such as 0.07 × 100 (7.000000000000001 in floating point) could lift the ceiling by one.
 */
export function nearestRank(percentile: number, count: number): number {
  return Math.max(1, Math.ceil((percentile * count) / 100));
}
