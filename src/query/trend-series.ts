// The bounds and the zero-filling of a statistics series (docs/api.md "Trends").
import { validationError } from '../domain/errors.js';
import { emptyUsage, usageFigures } from '../domain/gpu-usage.js';
import { intervalOf, intervalStart, type TrendInterval } from '../domain/trend-interval.js';
import type { TrendEntry } from './ports.js';
import type { Window } from './stats-range.js';

/** At most this many entries per group: 31 days of hours, about 2.7 years of days, 19 of weeks. */
export const MAX_SERIES_INTERVALS: Record<TrendInterval, number> = { hour: 744, day: 1000, week: 1000 };

export function seriesLength(interval: TrendInterval, window: Window): number {
  return intervalOf(interval, window.to - 1) - intervalOf(interval, window.from) + 1;
}

export function checkSeriesLength(interval: TrendInterval, window: Window): void {
  const max = MAX_SERIES_INTERVALS[interval];
  if (seriesLength(interval, window) <= max) return;
  throw validationError([
    {
      location: 'query',
      field: 'interval',
      message: `gives more than ${max} intervals of one ${interval} over this time range; choose a longer interval or a shorter range`,
    },
  ]);
}

/** Every interval the window touches, in order, those without a workload at zero. */
export function fillSeries(entries: readonly TrendEntry[], interval: TrendInterval, window: Window): TrendEntry[] {
  const byStart = new Map(entries.map((e) => [e.start, e]));
  const series: TrendEntry[] = [];
  for (let n = intervalOf(interval, window.from), last = intervalOf(interval, window.to - 1); n <= last; n++) {
    const start = intervalStart(interval, n);
    series.push(byStart.get(start) ?? emptyEntry(start));
  }
  return series;
}

/** An interval without a workload: every figure at zero. */
function emptyEntry(start: number): TrendEntry {
  return {
    start,
    key: null,
    workloadCount: 0,
    gpuHours: 0,
    averageDurationSeconds: 0,
    successRate: 0,
    averageQueueSeconds: 0,
    ...usageFigures(emptyUsage(), 0),
  };
}
