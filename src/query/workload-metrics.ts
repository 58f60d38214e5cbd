// GET /v1/workloads/{id}/metrics: summaries over a window of the workload's GPUs (DECISIONS "Metrics").
import type { Scope } from '../access/principal.js';
import { METRIC_NAMES, type MetricName, type MetricSummary, type MetricsTimeRange } from '../domain/metrics.js';
import type { Percentile } from '../domain/percentiles.js';
import { getVisibleWorkload } from './get-workload.js';
import type { TelemetryReader, WorkloadIndex } from './ports.js';

const HOUR_MS = 3_600_000;
const RANGE_HOURS: Record<Exclude<MetricsTimeRange, 'job_lifetime'>, number> = { last_1h: 1, last_6h: 6, last_24h: 24 };

export interface WorkloadMetricsRequest {
  workloadId: string;
  timeRange: MetricsTimeRange;
  metrics?: readonly MetricName[];
  /** Ascending, each once (the query's pattern says so). */
  percentiles?: readonly Percentile[];
}

export interface WorkloadMetricsResult {
  workloadId: string;
  timeRange: MetricsTimeRange;
  metrics: Partial<Record<MetricName, MetricSummary>>;
  /** The percentiles asked for: each summary reports every one of them, null where the reader gave none. */
  percentiles: readonly Percentile[];
}

export async function workloadMetrics(
  deps: { index: WorkloadIndex; telemetry: TelemetryReader },
  scope: Scope,
  request: WorkloadMetricsRequest,
  now: number,
): Promise<WorkloadMetricsResult> {
  const workload = await getVisibleWorkload(deps.index, scope, request.workloadId, now);
  const names = request.metrics ?? METRIC_NAMES;
  const percentiles = request.percentiles ?? [];
  const range = request.timeRange;
  const lifetime = range === 'job_lifetime';
  const window =
    range === 'job_lifetime'
      ? { from: workload.startedAt ?? workload.submittedAt, to: workload.completedAt ?? now }
      : { from: now - RANGE_HOURS[range] * HOUR_MS, to: now };
  const summaries = await deps.telemetry.summarize({
    workload,
    window,
    lifetime,
    metrics: names,
    ...(percentiles.length > 0 ? { percentiles } : {}),
  });
  const metrics: Partial<Record<MetricName, MetricSummary>> = {};
  for (const name of names) metrics[name] = summaries[name];
  return { workloadId: workload.workloadId, timeRange: request.timeRange, metrics, percentiles };
}
