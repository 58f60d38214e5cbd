// GET /v1/workloads/stats: a workload is in the range when its submitted_at is (DECISIONS "Statistics").
import { validationError } from '../domain/errors.js';
import type { Scope } from '../access/principal.js';
import type { TrendInterval } from '../domain/trend-interval.js';
import { scopedFilter } from '../access/scoped-filter.js';
import { percentileKey, type Percentile, type PercentileKey } from '../domain/percentiles.js';
import type { OrganizationPrices, QueuePercentiles, StatsFigures, StatsGroupKey, StatsResult, TrendEntry, WorkloadIndex } from './ports.js';
import { statsCost, type StatsCost } from './stats-cost.js';
import { checkSeriesLength, fillSeries } from './trend-series.js';
import { customSpanProblem, DEFAULT_STATS_TIME_RANGE, statsWindow, type StatsTimeRange, type Window } from './stats-range.js';

export interface WorkloadStatsRequest {
  timeRange?: StatsTimeRange;
  startDate?: number;
  endDate?: number;
  groupBy?: StatsGroupKey;
  initiativeId?: string;
  /** Adds `series`: the statistics per interval of submission. */
  interval?: TrendInterval;
  /** Adds these percentiles of queue time to the summary and each group. */
  queuePercentiles?: readonly Percentile[];
}

/** Percentiles of queue time in whole seconds, keyed pNN; null where no workload counts. */
export type QueuePercentileFigures = Partial<Record<PercentileKey, number | null>>;

export interface WorkloadStatsResult {
  summary: StatsFigures & { queuePercentiles?: QueuePercentileFigures };
  groups: (StatsFigures & { key: string; queuePercentiles?: QueuePercentileFigures })[];
  timeRange: StatsTimeRange;
  window: Window;
  /** Present when an interval was asked. */
  series?: TrendEntry[];
  /** Present when the organization has prices. */
  cost?: StatsCost;
}

export async function workloadStats(
  index: WorkloadIndex,
  scope: Scope,
  request: WorkloadStatsRequest,
  now: number,
  prices?: OrganizationPrices,
): Promise<WorkloadStatsResult> {
  const timeRange = request.timeRange ?? DEFAULT_STATS_TIME_RANGE;
  const window = resolveWindow(timeRange, request, now);
  if (timeRange === 'custom') checkCustomSpan(request, now, await index.retentionDays());
  const { interval } = request;
  if (interval !== undefined) checkSeriesLength(interval, window);
  const filter = scopedFilter(scope, { initiativeId: request.initiativeId, submittedFrom: window.from, submittedBefore: window.to });
  const groupBy = request.groupBy ?? null;
  const percentiles = request.queuePercentiles ?? [];
  // With an interval, the series' read gives the statistics too (the sums of its entries).
  const [read, queue, cost] = await Promise.all([
    interval === undefined
      ? index.stats(filter, groupBy, now).then((stats) => ({ stats, series: undefined }))
      : index.trends(filter, { groupBy, interval }, now),
    percentiles.length === 0 ? undefined : index.queuePercentiles(filter, { groupBy, percentiles }, now),
    prices === undefined ? undefined : statsCost(index, prices, filter, { groupBy, interval, from: window.from, now }),
  ]);
  const result = queue === undefined ? read.stats : withQueuePercentiles(read.stats, queue, percentiles);
  const priced = cost === undefined ? {} : { cost };
  if (interval === undefined || read.series === undefined) return { ...result, timeRange, window, ...priced };
  return { ...result, timeRange, window, ...priced, series: groupBy === null ? fillSeries(read.series, interval, window) : read.series };
}

/** The bounds of a custom range as asked (start_date, end_date). */
export interface CustomRange {
  startDate?: number;
  endDate?: number;
}

/** The statistics with each figure's percentiles; both reads count the same workloads, so every group has them. */
function withQueuePercentiles(
  figures: StatsResult,
  queue: QueuePercentiles,
  percentiles: readonly Percentile[],
): Omit<WorkloadStatsResult, 'timeRange' | 'window'> {
  const keyed = (values: readonly (number | null)[]): QueuePercentileFigures =>
    Object.fromEntries(percentiles.map((p, i) => [percentileKey(p), values[i] ?? null]));
  const byGroup = new Map(queue.groups.map((group) => [group.key, group.values]));
  return {
    summary: { ...figures.summary, queuePercentiles: keyed(queue.summary) },
    groups: figures.groups.map((group) => ({ ...group, queuePercentiles: keyed(byGroup.get(group.key) ?? []) })),
  };
}

/** The [from, to) of a statistics range (time_range, start_date, end_date), validated. */
export function resolveWindow(timeRange: StatsTimeRange, request: CustomRange, now: number): Window {
  if (timeRange !== 'custom') {
    const stray = request.startDate !== undefined ? 'start_date' : request.endDate !== undefined ? 'end_date' : null;
    if (stray) {
      throw validationError([{ location: 'query', field: stray, message: `only applies to time_range=custom, not "${timeRange}"` }]);
    }
    return statsWindow(timeRange, now);
  }
  if (request.startDate === undefined) {
    throw validationError([{ location: 'query', field: 'start_date', message: 'is required when time_range is custom' }]);
  }
  if (request.endDate === undefined && request.startDate > now) {
    throw validationError([
      { location: 'query', field: 'start_date', message: 'must not be in the future when end_date is omitted (the range ends now)' },
    ]);
  }
  const to = request.endDate ?? now + 1;
  if (to <= request.startDate) throw validationError([{ location: 'query', field: 'end_date', message: 'must be after start_date' }]);
  return { from: request.startDate, to };
}

/** A custom range spans at most the retention: what lies before it is no longer in the index, and reading it costs. */
export function checkCustomSpan(request: CustomRange, now: number, retentionDays: number | null): void {
  if (retentionDays === null || request.startDate === undefined) return;
  const problem = customSpanProblem({ from: request.startDate, to: request.endDate ?? now }, retentionDays);
  if (problem === null) return;
  const end = request.endDate === undefined ? 'now (end_date omitted)' : 'end_date';
  throw validationError([{ location: 'query', field: 'start_date', message: `is ${problem.span} before ${end}; ${problem.limit}` }]);
}
