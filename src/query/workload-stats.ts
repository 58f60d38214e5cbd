// GET /v1/workloads/stats: a workload is in the range when its submitted_at is (DECISIONS "Statistics").
import { validationError } from '../domain/errors.js';
import type { Scope } from '../domain/principal.js';
import type { TrendInterval } from '../domain/trend-interval.js';
import { scopedFilter } from './access.js';
import type { StatsGroupKey, StatsResult, TrendEntry, WorkloadIndex } from './ports.js';
import { checkSeriesLength, fillSeries } from './trend-series.js';
import { DEFAULT_STATS_TIME_RANGE, statsWindow, type StatsTimeRange, type Window } from './stats-range.js';

export interface WorkloadStatsRequest {
  timeRange?: StatsTimeRange;
  startDate?: number;
  endDate?: number;
  groupBy?: StatsGroupKey;
  initiativeId?: string;
  /** Adds `series`: the statistics per interval of submission. */
  interval?: TrendInterval;
}

export interface WorkloadStatsResult extends StatsResult {
  timeRange: StatsTimeRange;
  window: Window;
  /** Present when an interval was asked. */
  series?: TrendEntry[];
}

export async function workloadStats(index: WorkloadIndex, scope: Scope, request: WorkloadStatsRequest, now: number): Promise<WorkloadStatsResult> {
  const timeRange = request.timeRange ?? DEFAULT_STATS_TIME_RANGE;
  const window = resolveWindow(timeRange, request, now);
  const { interval } = request;
  if (interval !== undefined) checkSeriesLength(interval, window);
  const filter = scopedFilter(scope, { initiativeId: request.initiativeId, submittedFrom: window.from, submittedBefore: window.to });
  const groupBy = request.groupBy ?? null;
  const [result, trends] = await Promise.all([
    index.stats(filter, groupBy, now),
    interval === undefined ? undefined : index.trends(filter, { groupBy, interval }, now),
  ]);
  if (interval === undefined || trends === undefined) return { ...result, timeRange, window };
  return { ...result, timeRange, window, series: groupBy === null ? fillSeries(trends, interval, window) : trends };
}

function resolveWindow(timeRange: StatsTimeRange, request: WorkloadStatsRequest, now: number): Window {
  if (timeRange !== 'custom') {
    const stray = request.startDate !== undefined ? 'start_date' : request.endDate !== undefined ? 'end_date' : null;
    if (stray) throw validationError([{ location: 'query', field: stray, message: `only applies to time_range=custom, not "${timeRange}"` }]);
    return statsWindow(timeRange, now);
  }
  if (request.startDate === undefined) {
    throw validationError([{ location: 'query', field: 'start_date', message: 'is required when time_range is custom' }]);
  }
  if (request.endDate === undefined && request.startDate > now) {
    throw validationError([{ location: 'query', field: 'start_date', message: 'must not be in the future when end_date is omitted (the range ends now)' }]);
  }
  const to = request.endDate ?? now + 1;
  if (to <= request.startDate) throw validationError([{ location: 'query', field: 'end_date', message: 'must be after start_date' }]);
  return { from: request.startDate, to };
}
