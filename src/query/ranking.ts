// GET /v1/workloads/metrics: workloads ranked by a metric over the last hour, by GPU-hours, by their
// lifetime idle GPU-hours or GPU efficiency, or by their wait from submission to start.
// Workloads without samples in the last hour have no value to rank by and are left out.
import type { Scope } from '../access/principal.js';
import type { RankedMetricName, RankingSortKey } from '../domain/metrics.js';
import type { WorkloadStatus } from '../domain/workload.js';
import { scopedFilter } from '../access/scoped-filter.js';
import type { PriceSource, TelemetryReader, UsageSortKey, WorkloadIndex } from './ports.js';
import { rankByCost } from './cost-ranking.js';

export interface RankingRequest {
  sortBy: RankingSortKey;
  order: 'asc' | 'desc';
  limit: number;
  initiativeId?: string;
  status?: WorkloadStatus;
}

interface RankedBase {
  workloadId: string;
  name: string;
  initiativeId: string;
}
/** What an entry shows under its sort_by key. */
export type RankedFigure =
  | { metric: RankedMetricName; avg: number; current: number }
  | { metric: 'gpu_hours'; total: number }
  | { metric: 'queue_seconds'; total: number }
  | { metric: 'cost'; total: number }
  | { metric: UsageSortKey; value: number; coverage: number };
export type RankedEntry = RankedBase & RankedFigure;

export interface RankingResult {
  sortBy: RankingSortKey;
  entries: RankedEntry[];
  totalCount: number;
  scopeAverage: number | null;
  /** sort_by=cost: the currency of the costs. */
  currency?: { code: string; minorUnits: number };
}

export async function rankWorkloads(
  deps: { index: WorkloadIndex; telemetry: TelemetryReader; prices?: PriceSource },
  scope: Scope,
  request: RankingRequest,
  now: number,
): Promise<RankingResult> {
  const filter = scopedFilter(scope, { initiativeId: request.initiativeId, status: request.status });
  const sortBy = request.sortBy;
  const options = { order: request.order, limit: request.limit, now };
  if (sortBy === 'gpu_hours') {
    return fromIndex(sortBy, await deps.index.rankByGpuHours(filter, options), (e) => ({ metric: sortBy, total: e.gpuHours }));
  }
  if (sortBy === 'queue_seconds') {
    return fromIndex(sortBy, await deps.index.rankByQueue(filter, options), (e) => ({ metric: sortBy, total: e.queueSeconds }));
  }
  if (sortBy === 'cost') {
    const prices = deps.prices?.pricesFor(scope.organizationId);
    const ranking = await rankByCost(deps.index, prices, filter, options);
    return {
      ...fromIndex(sortBy, ranking, (e) => ({ metric: sortBy, total: e.cost })),
      currency: prices === undefined ? undefined : { code: prices.currency, minorUnits: prices.minorUnits },
    };
  }
  if (sortBy === 'idle_gpu_hours' || sortBy === 'gpu_efficiency') {
    return fromIndex(sortBy, await deps.index.rankByUsage(filter, { ...options, sortBy }), (e) => ({
      metric: sortBy,
      value: e.value,
      coverage: e.coverage,
    }));
  }
  const values = await deps.telemetry.lastHour(sortBy, now);
  const visible = values.size === 0
    ? new Map<string, { name: string; initiativeId: string }>()
    : await deps.index.describe([...values.keys()], filter);
  const ranked: (RankedBase & { avg: number; current: number })[] = [];
  for (const [workloadId, about] of visible) {
    const value = values.get(workloadId);
    if (value !== undefined) {
      ranked.push({ workloadId, name: about.name, initiativeId: about.initiativeId, avg: value.avg, current: value.current });
    }
  }
  const sign = request.order === 'asc' ? 1 : -1;
  // Ties go to the smaller workload_id in both orders, as in the GPU-hours ranking.
  ranked.sort((a, b) => sign * (a.avg - b.avg) || (a.workloadId < b.workloadId ? -1 : a.workloadId > b.workloadId ? 1 : 0));
  const scopeAverage = ranked.length === 0 ? null : ranked.reduce((sum, r) => sum + r.avg, 0) / ranked.length;
  return {
    sortBy,
    entries: ranked.slice(0, request.limit).map((r) => ({
      workloadId: r.workloadId,
      name: r.name,
      initiativeId: r.initiativeId,
      metric: sortBy,
      avg: r.avg,
      current: r.current,
    })),
    totalCount: ranked.length,
    scopeAverage,
  };
}

/** A ranking the index computed, each entry with the figure it shows. */
function fromIndex<E extends RankedBase>(
  sortBy: RankingSortKey,
  ranking: { entries: E[]; totalCount: number; average: number | null },
  figure: (entry: E) => RankedFigure,
): RankingResult {
  return {
    sortBy,
    entries: ranking.entries.map((e) => ({ workloadId: e.workloadId, name: e.name, initiativeId: e.initiativeId, ...figure(e) })),
    totalCount: ranking.totalCount,
    scopeAverage: ranking.average,
  };
}
