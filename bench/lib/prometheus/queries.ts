// The PromQL a Prometheus user would run for what our two telemetry endpoints answer, and the check
// that both answers agree (the proof that both hold the same data).
//
// Our metrics come from dcgm-exporter fields (src/telemetry/scrape/dcgm-readings.ts): gpu_utilization is
// DCGM_FI_DEV_GPU_UTIL, memory_utilization FB_USED / (FB_USED + FB_FREE) in %, temperature
// DCGM_FI_DEV_GPU_TEMP, power_usage DCGM_FI_DEV_POWER_USAGE, gpu_usage DCGM_FI_PROF_GR_ENGINE_ACTIVE in
// %. avg is over every sample of every GPU, min/max over every sample, current the mean of each
// GPU's latest sample: avg(avg_over_time), min(min_over_time), max(max_over_time),
// avg(last_over_time) over the job's GPU series (the same averages when every series holds as many
// samples, which one scrape per exporter per interval gives). memory_utilization divides by the
// GPU's framebuffer total (used + free, constant on a GPU), so the range function applies to used.
import { METRIC_NAMES, type MetricName } from '../../../src/domain/metrics.js';
import { METRIC_SCALE } from '../../../src/telemetry/rings/metric-codec.js';

export const STATS = ['avg', 'min', 'max', 'current'] as const;
export type Stat = (typeof STATS)[number];

const STAT_AGGREGATION: Record<Stat, { aggregate: string; overTime: string }> = {
  avg: { aggregate: 'avg', overTime: 'avg_over_time' },
  min: { aggregate: 'min', overTime: 'min_over_time' },
  max: { aggregate: 'max', overTime: 'max_over_time' },
  current: { aggregate: 'avg', overTime: 'last_over_time' },
};

/** One metric's per-GPU expression over `range` for a series selector (`{…}` without braces). */
function perGpu(metric: MetricName, overTime: string, selector: string, range: string): string {
  const field = (name: string, fn = overTime) => `${fn}(${name}{${selector}}[${range}])`;
  switch (metric) {
    case 'gpu_utilization':
      return field('DCGM_FI_DEV_GPU_UTIL');
    case 'memory_utilization':
      return `100 * ${field('DCGM_FI_DEV_FB_USED')} / (${field('DCGM_FI_DEV_FB_USED', 'last_over_time')} + ${field('DCGM_FI_DEV_FB_FREE', 'last_over_time')})`;
    case 'temperature':
      return field('DCGM_FI_DEV_GPU_TEMP');
    case 'power_usage':
      return field('DCGM_FI_DEV_POWER_USAGE');
    case 'gpu_usage':
      return `100 * ${field('DCGM_FI_PROF_GR_ENGINE_ACTIVE')}`;
  }
}

/** The selector of a Job's GPU series: the exporter labels each with the pod, and a Job's pods are named after it. */
export function jobSelector(namespace: string, podNamePattern: string): string {
  return `namespace="${namespace}",pod=~"${podNamePattern}"`;
}

/**
 * Every metric × stat of one workload in one query (one round trip, as our one request): the 20
 * aggregates joined with `or`, each tagged with a `stat` label "metric:stat".
 */
export function workloadMetricsQuery(selector: string, range: string): string {
  const parts: string[] = [];
  for (const metric of METRIC_NAMES) {
    for (const stat of STATS) {
      const { aggregate, overTime } = STAT_AGGREGATION[stat];
      parts.push(`label_replace(${aggregate}(${perGpu(metric, overTime, selector, range)}), "stat", "${metric}:${stat}", "", "")`);
    }
  }
  return parts.join(' or ');
}

/**
 * Workloads ranked by the average of their GPUs' utilization over `range`, as our ranking does: a
 * workload is a Job's pods, or a bare pod. dcgm-exporter knows pods only, so the Job comes from
 * kube-state-metrics' kube_pod_owner; label_join + label_replace make one `workload` label of either.
 */
export function rankingQuery(limit: number, range: string): string {
  const joined = `avg_over_time(DCGM_FI_DEV_GPU_UTIL[${range}]) * on (namespace, pod) group_left (owner_kind, owner_name) kube_pod_owner`;
  const owner = `label_join(${joined}, "owner", "/", "owner_kind", "owner_name", "pod")`;
  const job = `label_replace(${owner}, "workload", "$1", "owner", "Job/([^/]+)/.*")`;
  const bare = `label_replace(${job}, "workload", "$1", "owner", "<none>/<none>/(.+)")`;
  return `topk(${limit}, avg by (namespace, workload) (${bare}))`;
}

/** The cheapest ranking Prometheus can give, by pod rather than workload: not our answer, a floor for its cost. */
export function podRankingQuery(limit: number, range: string): string {
  return `topk(${limit}, avg by (namespace, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[${range}])))`;
}

/**
 * Largest difference our answer may show: half a stored unit (the rings keep 0.01 % / 0.01 °C /
 * 0.1 W) plus the API's rounding of averages to 0.01, plus float noise.
 */
export function toleranceOf(metric: MetricName): number {
  const scale = METRIC_SCALE[METRIC_NAMES.indexOf(metric)] ?? 100;
  return 0.5 / scale + 0.005 + 1e-9;
}

export interface MetricsComparison {
  /** Largest |ours − Prometheus| over every metric and stat. */
  maxDifference: number;
  byMetric: Record<string, { maxDifference: number; tolerance: number }>;
  /** metric:stat pairs outside tolerance or missing on one side. */
  mismatches: string[];
  ours: Record<string, number | null>;
  prometheus: Record<string, number | null>;
}

export function compareMetrics(ours: Partial<Record<MetricName, Record<Stat, number | null>>>, prometheus: { metric: Record<string, string>; value: number }[]): MetricsComparison {
  const theirs = new Map(prometheus.map((s) => [s.metric['stat'] ?? '', s.value]));
  const result: MetricsComparison = { maxDifference: 0, byMetric: {}, mismatches: [], ours: {}, prometheus: {} };
  for (const metric of METRIC_NAMES) {
    const tolerance = toleranceOf(metric);
    let worst = 0;
    for (const stat of STATS) {
      const key = `${metric}:${stat}`;
      const mine = ours[metric]?.[stat] ?? null;
      const other = theirs.get(key) ?? null;
      result.ours[key] = mine;
      result.prometheus[key] = other;
      if (mine === null || other === null || !Number.isFinite(other)) {
        result.mismatches.push(`${key}: ours ${mine}, Prometheus ${other}`);
        continue;
      }
      const difference = Math.abs(mine - other);
      worst = Math.max(worst, difference);
      if (difference > tolerance) result.mismatches.push(`${key}: ours ${mine}, Prometheus ${other} (difference ${difference.toFixed(4)} > ${tolerance.toFixed(3)})`);
    }
    result.byMetric[metric] = { maxDifference: round(worst), tolerance: round(tolerance) };
    result.maxDifference = Math.max(result.maxDifference, worst);
  }
  result.maxDifference = round(result.maxDifference);
  return result;
}

export interface RankingComparison {
  ours: { name: string; avg: number }[];
  prometheus: { name: string; avg: number }[];
  /** Largest difference between the values at the same rank. */
  maxDifference: number;
  /** Workloads above the last rank's value (no tie at the cut) found in one answer and not the other. */
  mismatches: string[];
}

/** Same values rank by rank, and the same workloads wherever a tie at the cut cannot reorder them. */
export function compareRankings(ours: { name: string; avg: number }[], prometheus: { name: string; avg: number }[]): RankingComparison {
  const mismatches: string[] = [];
  if (ours.length !== prometheus.length) mismatches.push(`ours ranks ${ours.length} workloads, Prometheus ${prometheus.length}`);
  let maxDifference = 0;
  const tolerance = toleranceOf('gpu_utilization');
  for (let i = 0; i < Math.min(ours.length, prometheus.length); i += 1) {
    const difference = Math.abs((ours[i]?.avg ?? 0) - (prometheus[i]?.avg ?? 0));
    maxDifference = Math.max(maxDifference, difference);
    if (difference > tolerance) mismatches.push(`rank ${i + 1}: ours ${ours[i]?.name} ${ours[i]?.avg}, Prometheus ${prometheus[i]?.name} ${prometheus[i]?.avg}`);
  }
  const cut = Math.max(ours.at(-1)?.avg ?? 0, prometheus.at(-1)?.avg ?? 0) + tolerance;
  const above = (list: { name: string; avg: number }[]) => new Set(list.filter((e) => e.avg > cut).map((e) => e.name));
  const mine = above(ours);
  const theirs = above(prometheus);
  for (const name of mine) if (!theirs.has(name)) mismatches.push(`${name} is in our top ${ours.length} above the cut, not in Prometheus'`);
  for (const name of theirs) if (!mine.has(name)) mismatches.push(`${name} is in Prometheus' top ${prometheus.length} above the cut, not in ours`);
  return { ours, prometheus, maxDifference: round(maxDifference), mismatches };
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
