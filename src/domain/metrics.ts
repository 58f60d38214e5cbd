// GPU metric names of the API (DECISIONS "Metrics") and the shapes the read side returns.
import type { PercentileKey } from './percentiles.js';

export const METRIC_NAMES = ['gpu_utilization', 'memory_utilization', 'temperature', 'power_usage', 'gpu_usage'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

export const METRICS_TIME_RANGES = ['last_1h', 'last_6h', 'last_24h', 'job_lifetime'] as const;
export type MetricsTimeRange = (typeof METRICS_TIME_RANGES)[number];

/**
 * avg/min/max over every sample in the window; current = mean of each GPU's latest sample. null: no
 * samples. `pNN`: the percentiles asked for (docs/api.md "GPU metrics"), null when not known.
 */
export interface MetricSummary extends Partial<Record<PercentileKey, number | null>> {
  avg: number | null;
  min: number | null;
  max: number | null;
  current: number | null;
}

export const EMPTY_SUMMARY: MetricSummary = Object.freeze({ avg: null, min: null, max: null, current: null });

export const RANKING_SORT_KEYS = [
  'gpu_utilization',
  'memory_utilization',
  'power_usage',
  'gpu_hours',
  'idle_gpu_hours',
  'gpu_efficiency',
  'queue_seconds',
  'cost',
] as const;
export type RankingSortKey = (typeof RANKING_SORT_KEYS)[number];
/** The keys ranked by a last-hour telemetry average; the others come from the index. */
export type RankedMetricName = Exclude<RankingSortKey, 'gpu_hours' | 'idle_gpu_hours' | 'gpu_efficiency' | 'queue_seconds' | 'cost'>;
