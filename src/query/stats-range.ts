// Resolves a statistics time_range to a [from, to) window in UTC (DECISIONS "Statistics"):
// calendar ranges start at 00:00 UTC of the day / ISO week (Monday) / month; rolling ranges end now.

export const STATS_TIME_RANGES = ['today', 'this_week', 'this_month', 'last_7_days', 'last_30_days', 'custom'] as const;
export type StatsTimeRange = (typeof STATS_TIME_RANGES)[number];
export const DEFAULT_STATS_TIME_RANGE: StatsTimeRange = 'last_30_days';

const DAY_MS = 86_400_000;

export interface Window {
  from: number;
  to: number;
}

export function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function startOfIsoWeek(ms: number): number {
  const day = startOfUtcDay(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
  return day - weekday * DAY_MS;
}

export function startOfUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The window of a non-custom range at `now`; `to` is exclusive, one millisecond past now so now is in. */
export function statsWindow(range: Exclude<StatsTimeRange, 'custom'>, now: number): Window {
  const to = now + 1;
  switch (range) {
    case 'today':
      return { from: startOfUtcDay(now), to };
    case 'this_week':
      return { from: startOfIsoWeek(now), to };
    case 'this_month':
      return { from: startOfUtcMonth(now), to };
    case 'last_7_days':
      return { from: now - 7 * DAY_MS, to };
    case 'last_30_days':
      return { from: now - 30 * DAY_MS, to };
  }
}
