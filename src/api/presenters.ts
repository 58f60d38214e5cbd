// Domain results → the JSON of seed-api.md. The one place that renames to snake_case, formats times
// and rounds: GPU-hours to 4 decimals, rates to 4, metric values and averages to 2.
import type { MetricName, MetricSummary } from '../domain/metrics.js';
import { percentileKey, type Percentile } from '../domain/percentiles.js';
import { emptyUsage, usageFigures, type UsageFigures } from '../domain/gpu-usage.js';
import { toIso } from '../domain/time.js';
import type { WorkloadRecord, WorkloadView } from '../domain/workload.js';
import type { CapacityResult, EntryCost } from '../query/capacity.js';
import type { CapacityFigures } from '../capacity/budget-figures.js';
import type { StatsFigures, StatsGroupKey } from '../query/ports.js';
import type { RankedEntry, RankingResult } from '../query/ranking.js';
import type { WorkloadMetricsResult } from '../query/workload-metrics.js';
import type { WorkloadCost } from '../query/workload-cost.js';
import type { QueuePercentileFigures, WorkloadStatsResult } from '../query/workload-stats.js';
import { noCost, seriesKey, type CostFigures } from '../query/stats-cost.js';

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  const r = Math.round(value * f) / f;
  return Object.is(r, -0) ? 0 : r;
}
const hours = (v: number) => round(v, 4);
const orNull = (v: number | null, digits: number) => (v === null ? null : round(v, digits));
/** Money to the currency's minor units (2 for USD), as an invoice shows it. */
export const money = (v: number | null, minorUnits: number) => orNull(v, minorUnits);

export function presentListItem(w: WorkloadRecord) {
  return {
    workload_id: w.workloadId,
    name: w.name,
    status: w.status,
    submitted_by: w.submittedBy,
    initiative_id: w.initiativeId,
    instance_type: w.instanceType,
    gpu_count: w.gpuCount,
    submitted_at: toIso(w.submittedAt),
    started_at: toIso(w.startedAt),
  };
}

/** What a workload's GPUs are worth and how they were counted (docs/workloads.md, "How GPUs are counted"). */
export function presentShare(w: WorkloadRecord) {
  return {
    // Rows written before shares were counted held gpu_count whole GPUs, and say nothing of how.
    allocated_gpus: round(w.allocatedGpus ?? w.gpuCount, 4),
    gpu_sharing: w.gpuSharing ?? null,
    gpu_model: w.gpuModel ?? null,
  };
}

export function presentWorkload(w: WorkloadView, cost?: WorkloadCost) {
  return {
    ...presentListItem(w),
    completed_at: toIso(w.completedAt),
    duration_seconds: w.durationSeconds,
    gpu_hours_used: hours(w.gpuHoursUsed),
    exit_code: w.exitCode,
    is_managed: w.isManaged,
    cluster_id: w.clusterId,
    namespace: w.namespace,
    queue_seconds: w.queueSeconds,
    failure_reason: w.failureReason,
    ...presentShare(w),
    ...usageOf(usageFigures(w.usage ?? emptyUsage(), w.gpuHoursUsed)),
    ...(cost === undefined ? {} : presentWorkloadCost(cost)),
  };
}

function presentWorkloadCost(c: WorkloadCost) {
  return {
    currency: c.currency,
    cost: money(c.cost, c.minorUnits),
    energy_cost: money(c.energyCost, c.minorUnits),
    unpriced_gpu_hours: hours(c.unpricedGpuHours),
  };
}

/** Additions (docs/api.md "GPU usage"): hours and kWh to 4 decimals, shares to 4; null where nothing was sampled. */
function usageOf(u: UsageFigures) {
  return {
    idle_gpu_hours: orNull(u.idleGpuHours, 4),
    gpu_efficiency: orNull(u.gpuEfficiency, 4),
    utilization_coverage: round(u.utilizationCoverage, 4),
    energy_kwh: orNull(u.energyKwh, 4),
    energy_coverage: round(u.energyCoverage, 4),
  };
}

export function presentStats(result: WorkloadStatsResult, groupBy: StatsGroupKey | undefined) {
  const s = result.summary;
  const startOf = startTimes();
  const { cost } = result;
  const priced = (g: StatsFigures, figures: CostFigures | undefined, entry: Record<string, unknown>) =>
    (cost === undefined ? entry : Object.assign(entry, statsCostOf(g, figures ?? noCost(), cost.minorUnits)));
  const totals = cost === undefined ? undefined : statsCostOf(s, cost.summary, cost.minorUnits);
  return {
    ...(cost === undefined ? {} : { currency: cost.currency }),
    summary: {
      total_workloads: s.workloadCount,
      total_gpu_hours: hours(s.gpuHours),
      average_duration_seconds: round(s.averageDurationSeconds, 2),
      success_rate: round(s.successRate, 4),
      average_queue_seconds: round(s.averageQueueSeconds, 2),
      ...queuePercentilesOf(s.queuePercentiles),
      ...totalUsageOf(s),
      ...(totals === undefined
        ? {}
        : { total_cost: totals.cost, total_idle_cost: totals.idle_cost, unpriced_gpu_hours: totals.unpriced_gpu_hours }),
    },
    grouped: groupBy
      ? result.groups.map((g) =>
        priced(g, cost?.groups.get(g.key), groupFigures(g, g.queuePercentiles, { [groupBy]: groupKey(groupBy, g.key) })))
      : [],
    ...(result.series === undefined
      ? {}
      : {
        series: result.series.map((e) => {
          const start = startOf(e.start);
          const entry = groupFigures(e, undefined, groupBy ? { start, [groupBy]: groupKey(groupBy, e.key) } : { start });
          return priced(e, cost?.series.get(seriesKey(e.start, groupBy ? e.key : null)), entry);
        }),
      }),
  };
}

/**
 * A statistic's cost as a workload's is shown: null when it used GPU time and no rate priced any of
 * it; idle cost null where no idle time was sampled.
 */
function statsCostOf(g: StatsFigures, c: CostFigures, minorUnits: number) {
  const unpriced = Math.max(0, g.gpuHours - c.pricedGpuHours);
  const known = c.pricedGpuHours > 0 || g.gpuHours === 0;
  return {
    cost: known ? money(c.cost, minorUnits) : null,
    idle_cost: known && g.idleGpuHours !== null ? money(c.idleCost, minorUnits) : null,
    unpriced_gpu_hours: hours(unpriced),
  };
}

// A series by day and team repeats each day's start once per team (840 entries, 30 starts): each
// start is formatted once per response.
function startTimes(): (ms: number) => string {
  const formatted = new Map<number, string>();
  return (ms) => {
    let iso = formatted.get(ms);
    if (iso === undefined) formatted.set(ms, (iso = toIso(ms)));
    return iso;
  };
}

/** The group of workloads without a failure reason (or a known GPU model) is keyed '' in the index and shown as null. */
function groupKey(groupBy: StatsGroupKey, key: string | null): string | null {
  return (groupBy === 'failure_reason' || groupBy === 'gpu_model') && key === '' ? null : key;
}

/**
 * A group's or series entry's figures, written into `entry` (after its start and group value) in
 * their documented order. Assigned one by one rather than spread from smaller objects: a month of
 * weeks by submitter has 1,750 entries, whose presentation and JSON took 8 ms with the spreads, 3.5 ms so.
 */
function groupFigures(
  g: StatsFigures,
  queuePercentiles?: QueuePercentileFigures,
  entry: Record<string, unknown> = {},
): Record<string, unknown> {
  entry.workload_count = g.workloadCount;
  entry.gpu_hours = hours(g.gpuHours);
  entry.success_rate = round(g.successRate, 4);
  entry.average_queue_seconds = round(g.averageQueueSeconds, 2);
  if (queuePercentiles !== undefined) Object.assign(entry, queuePercentilesOf(queuePercentiles));
  entry.idle_gpu_hours = orNull(g.idleGpuHours, 4);
  entry.gpu_efficiency = orNull(g.gpuEfficiency, 4);
  entry.utilization_coverage = round(g.utilizationCoverage, 4);
  entry.energy_kwh = orNull(g.energyKwh, 4);
  entry.energy_coverage = round(g.energyCoverage, 4);
  return entry;
}

/** `pNN_queue_seconds` per asked percentile; nothing when none was asked. */
function queuePercentilesOf(figures: QueuePercentileFigures | undefined): Record<string, number | null> {
  return Object.fromEntries(Object.entries(figures ?? {}).map(([key, value]) => [`${key}_queue_seconds`, value ?? null]));
}

/** The summary's usage, its sums named as its other sums are (total_…). */
function totalUsageOf(s: StatsFigures) {
  const { idle_gpu_hours, energy_kwh, ...shares } = usageOf(s);
  return { total_idle_gpu_hours: idle_gpu_hours, ...shares, total_energy_kwh: energy_kwh };
}


/** The four figures, then each asked percentile in ascending order; without any, exactly the four. */
function presentSummary(s: MetricSummary, percentiles: readonly Percentile[]): MetricSummary {
  const figures: MetricSummary = { avg: orNull(s.avg, 2), min: orNull(s.min, 2), max: orNull(s.max, 2), current: orNull(s.current, 2) };
  for (const percentile of percentiles) figures[percentileKey(percentile)] = orNull(s[percentileKey(percentile)] ?? null, 2);
  return figures;
}

export function presentMetrics(result: WorkloadMetricsResult) {
  const metrics: Partial<Record<MetricName, ReturnType<typeof presentSummary>>> = {};
  for (const [name, summary] of Object.entries(result.metrics) as [MetricName, MetricSummary][]) {
    metrics[name] = presentSummary(summary, result.percentiles);
  }
  return { workload_id: result.workloadId, time_range: result.timeRange, metrics };
}

export function presentRanking(result: RankingResult) {
  const { currency } = result;
  const digits = currency !== undefined
    ? currency.minorUnits
    : result.sortBy === 'gpu_hours' || result.sortBy === 'idle_gpu_hours' || result.sortBy === 'gpu_efficiency' ? 4 : 2;
  return {
    ...(currency === undefined ? {} : { currency: currency.code }),
    workloads: result.entries.map((e) => ({
      workload_id: e.workloadId,
      name: e.name,
      initiative_id: e.initiativeId,
      [e.metric]: rankedFigure(e, digits),
    })),
    scope_average: { [result.sortBy]: orNull(result.scopeAverage, digits) },
  };
}

function rankedFigure(e: RankedEntry, digits: number) {
  switch (e.metric) {
    case 'cost':
      return { total: money(e.total, digits) };
    case 'gpu_hours':
      return { total: hours(e.total) };
    case 'queue_seconds':
      return { total: e.total };
    case 'idle_gpu_hours':
      return { total: hours(e.value), coverage: round(e.coverage, 4) };
    case 'gpu_efficiency':
      return { value: round(e.value, 4), coverage: round(e.coverage, 4) };
    default:
      return { avg: round(e.avg, 2), current: round(e.current, 2) };
  }
}

export function presentCapacity(c: CapacityResult) {
  const minorUnits = c.currency?.minorUnits ?? 2;
  const costs = (sum: '' | 'total_', cost: EntryCost | undefined) =>
    cost === undefined
      ? {}
      : {
        [`${sum}allocated_cost`]: money(cost.allocated, minorUnits),
        [`${sum}used_cost`]: money(cost.figures.used, minorUnits),
        [`${sum}remaining_cost`]: cost.allocated === null ? null : money(cost.figures.remaining, minorUnits),
        burn_rate_cost_per_day: money(cost.figures.burnRatePerDay, minorUnits),
        projected_used_cost_at_period_end: money(cost.figures.projectedUsedAtPeriodEnd, minorUnits),
        projected_cost_exhaustion_at: cost.allocated === null ? null : toIso(cost.figures.projectedExhaustionAt),
        unpriced_gpu_hours: hours(cost.unpricedGpuHours),
      };
  const budget = (f: CapacityFigures) => ({
    allocated_gpu_hours: hours(f.allocated),
    used_gpu_hours: hours(f.used),
    remaining_gpu_hours: hours(f.remaining),
    ...forecast(f),
  });
  const forecast = (f: CapacityFigures) => ({
    burn_rate_gpu_hours_per_day: hours(f.burnRatePerDay),
    projected_used_gpu_hours_at_period_end: orNull(f.projectedUsedAtPeriodEnd, 4),
    projected_exhaustion_at: toIso(f.projectedExhaustionAt),
  });
  return {
    organization_id: c.organizationId,
    ...(c.currency === undefined ? {} : { currency: c.currency.code }),
    summary: {
      total_allocated_gpu_hours: hours(c.summary.allocated),
      total_used_gpu_hours: hours(c.summary.used),
      total_remaining_gpu_hours: hours(c.summary.remaining),
      current_active_gpus: c.summary.currentActiveGpus,
      ...forecast(c.summary),
      ...costs('total_', c.summary.cost),
    },
    pools: c.pools.map((p) => ({
      pool_id: p.poolId, name: p.name, ...budget(p), instance_types: p.instanceTypes,
      capacity_gpu_hours_in_period: orNull(p.capacityGpuHoursInPeriod, 4), over_committed: p.overCommitted, ...costs('', p.cost),
    })),
    initiatives: c.initiatives.map((i) => ({ initiative_id: i.initiativeId, name: i.name, ...budget(i), ...costs('', i.cost) })),
  };
}
