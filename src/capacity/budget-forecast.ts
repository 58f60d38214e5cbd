// Where a budget is heading at its recent pace (docs/api.md "Capacity"): the burn rate is the GPU-hours
// used in the trailing week, per day, whatever the period boundaries inside that week; the projections
// extend it linearly from now.
export const BURN_WINDOW_DAYS = 7;
export const DAY_MS = 86_400_000;

/** Where the trailing window whose use sets the burn rate starts. */
export function burnWindowStart(now: number): number {
  return now - BURN_WINDOW_DAYS * DAY_MS;
}

export interface Forecast {
  burnRatePerDay: number;
  /** null for the `total` period, which has no end. */
  projectedUsedAtPeriodEnd: number | null;
  /** null when the budget is not expected to run out within the period, or there is no budget. */
  projectedExhaustionAt: number | null;
}

export interface ForecastInput {
  /** false for an organization without a budget: nothing can be exhausted. */
  budgeted: boolean;
  allocated: number;
  used: number;
  /** GPU-hours used in [now − BURN_WINDOW_DAYS, now). */
  usedInBurnWindow: number;
  now: number;
  periodEnd: number | null;
}

export function forecast(input: ForecastInput): Forecast {
  const { allocated, used, now, periodEnd } = input;
  const burnRatePerDay = input.usedInBurnWindow / BURN_WINDOW_DAYS;
  const projectedUsedAtPeriodEnd = periodEnd === null ? null : used + (burnRatePerDay * (periodEnd - now)) / DAY_MS;
  // Nothing allocated and nothing used (a caller without teams) has nothing to run out of.
  const exhaustible = input.budgeted && (allocated > 0 || used > 0);
  return {
    burnRatePerDay,
    projectedUsedAtPeriodEnd,
    projectedExhaustionAt: exhaustible ? exhaustionAt(allocated - used, burnRatePerDay, now, periodEnd) : null,
  };
}

function exhaustionAt(remaining: number, burnRatePerDay: number, now: number, periodEnd: number | null): number | null {
  // Already spent: it ran out at the latest now, and "now" is what a dashboard should show.
  if (remaining <= 0) return now;
  if (burnRatePerDay <= 0) return null;
  const at = now + Math.ceil((remaining / burnRatePerDay) * DAY_MS);
  return periodEnd !== null && at >= periodEnd ? null : at;
}
