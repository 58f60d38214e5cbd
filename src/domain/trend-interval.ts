// The intervals of a statistics series (docs/api.md "Trends"): UTC hours, UTC days, and ISO weeks
// from Monday 00:00 UTC. An interval is numbered from the epoch; 1970-01-05 was the first Monday.
export const TREND_INTERVALS = ['hour', 'day', 'week'] as const;
export type TrendInterval = (typeof TREND_INTERVALS)[number];

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Days from the epoch (a Thursday) back to the Monday that starts week 0. */
export const WEEK_OFFSET_DAYS = 3;

export const INTERVAL_MS: Record<TrendInterval, number> = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS };

/** The day number of the Monday that starts the week holding day number `day` (days before 1970 too). */
export function weekStartDay(day: number): number {
  return day - ((((day + WEEK_OFFSET_DAYS) % 7) + 7) % 7);
}

/** The number of the interval holding `ms`. */
export function intervalOf(interval: TrendInterval, ms: number): number {
  return interval === 'week' ? Math.floor((Math.floor(ms / DAY_MS) + WEEK_OFFSET_DAYS) / 7) : Math.floor(ms / INTERVAL_MS[interval]);
}

/** When interval number `n` starts. */
export function intervalStart(interval: TrendInterval, n: number): number {
  return interval === 'week' ? (n * 7 - WEEK_OFFSET_DAYS) * DAY_MS : n * INTERVAL_MS[interval];
}

