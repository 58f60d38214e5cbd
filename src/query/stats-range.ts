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

/**
 * Why a custom range [from, to) is too long, or null: it may span at most `retentionDays` days, the
 * retention (`to` is end_date, or now when it is omitted: the millisecond that takes now in is not counted).
 */
export function customSpanProblem(range: Window, retentionDays: number): { span: string; limit: string } | null {
  const span = range.to - range.from;
  if (span <= retentionDays * DAY_MS) return null;
  return {
    span: describeSpan(span),
    limit:
      `a custom range spans at most ${describeSpan(retentionDays * DAY_MS)} ` +
      '(retention_days: older finished workloads are no longer in the index)',
  };
}

/** `400 days`, `400 days 2 h 5 min`, `1 day 1 ms`: the whole units of a span, largest first. */
export function describeSpan(ms: number): string {
  const units: [number, string, string][] = [
    [DAY_MS, ' day', ' days'], [3_600_000, ' h', ' h'], [60_000, ' min', ' min'], [1000, ' s', ' s'], [1, ' ms', ' ms'],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [size, one, many] of units) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0) parts.push(`${count.toLocaleString('en-US')}${count === 1 ? one : many}`);
  }
  return parts.length === 0 ? '0 ms' : parts.join(' ');
}
