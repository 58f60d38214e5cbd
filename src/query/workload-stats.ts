// GET /v1/workloads/stats: a workload is in the range when its submitted_at is (DECISIONS "Statistics").
import { validationError } from '../domain/errors.js';
import type { Scope } from '../domain/principal.js';
import { scopedFilter } from './access.js';
import type { StatsGroupKey, StatsResult, WorkloadIndex } from './ports.js';
import { DEFAULT_STATS_TIME_RANGE, statsWindow, type StatsTimeRange, type Window } from './stats-range.js';

export interface WorkloadStatsRequest {
  timeRange?: StatsTimeRange;
  startDate?: number;
  endDate?: number;
  groupBy?: StatsGroupKey;
  initiativeId?: string;
}

export interface WorkloadStatsResult extends StatsResult {
  timeRange: StatsTimeRange;
  window: Window;
}

export async function workloadStats(index: WorkloadIndex, scope: Scope, request: WorkloadStatsRequest, now: number): Promise<WorkloadStatsResult> {
  const timeRange = request.timeRange ?? DEFAULT_STATS_TIME_RANGE;
  const window = resolveWindow(timeRange, request, now);
  const filter = scopedFilter(scope, { initiativeId: request.initiativeId, submittedFrom: window.from, submittedBefore: window.to });
  const result = await index.stats(filter, request.groupBy ?? null, now);
  return { ...result, timeRange, window };
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
