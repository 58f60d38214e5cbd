// GET /v1/workloads/{workload_id}/metrics and GET /v1/workloads/metrics (ranking).
import type { MetricName } from '../../domain/metrics.js';
import type { Percentile } from '../../domain/percentiles.js';
import { scopeOf } from '../../access/principal.js';
import { rankWorkloads } from '../../query/ranking.js';
import { workloadMetrics } from '../../query/workload-metrics.js';
import { principalOf } from '../context.js';
import { defineEndpoint } from '../endpoint.js';
import { presentMetrics, presentRanking } from '../presenters.js';
import { RankingQuery, WorkloadMetricsQuery } from '../schemas/query.js';
import { CountMetadata, Envelope, RankedWorkloads, WorkloadMetrics } from '../schemas/responses.js';
import { WorkloadIdParam } from './workloads.js';

/** The names of a `metrics` parameter that passed its pattern (known names only), each once. */
export function parseMetricNames(text: string | undefined): MetricName[] | undefined {
  return text === undefined ? undefined : [...new Set(text.split(',') as MetricName[])];
}

/** The values of a `percentiles` parameter that passed its pattern: known ones, ascending, each once. */
export function parsePercentiles(text: string | undefined): Percentile[] {
  return text === undefined ? [] : (text.split(',').map(Number) as Percentile[]);
}

export const workloadMetricsEndpoint = defineEndpoint({
  operationId: 'getWorkloadMetrics',
  path: '/v1/workloads/{workload_id}/metrics',
  summary: 'GPU metrics of one workload',
  description:
    'avg/min/max over every sample of the workload\'s GPUs in the range; current = mean of each GPU\'s latest sample. ' +
    'Units: gpu_utilization, memory_utilization and gpu_usage in percent, temperature in °C, power_usage in W. ' +
    'A metric with no samples in the range has all four values null. ' +
    'With `percentiles`, each metric also has `pNN` per asked percentile (nearest rank; null without samples, and for job_lifetime when ' +
    'the history kept (24 h) no longer holds every sample of the workload\'s life); docs/api.md gives the resolution and the error bound.',
  authenticated: true,
  query: WorkloadMetricsQuery,
  pathParams: { workload_id: WorkloadIdParam },
  response: Envelope(WorkloadMetrics),
  errors: ['VALIDATION_ERROR', 'NOT_FOUND'],
  async handle({ ctx, query, params, deps }) {
    const metrics = parseMetricNames(query.metrics);
    const percentiles = parsePercentiles(query.percentiles);
    const result = await workloadMetrics(
      deps,
      scopeOf(principalOf(ctx)),
      { workloadId: params.workload_id ?? '', timeRange: query.time_range, ...(metrics ? { metrics } : {}), percentiles },
      deps.clock.now(),
    );
    return { body: { data: presentMetrics(result) } };
  },
});

export const rankingEndpoint = defineEndpoint({
  operationId: 'rankWorkloadMetrics',
  path: '/v1/workloads/metrics',
  summary: 'Workloads ranked by a metric',
  description:
    'Metrics rank by their average over the last hour, with current; workloads without samples in that hour are not ranked. ' +
    'gpu_hours ranks every workload in scope by total GPU-hours ({"total": n}); ' +
    'queue_seconds (an addition) by its wait from submission to start, ' +
    'pending ones up to now ({"total": whole seconds}). scope_average is keyed by sort_by. ' +
    'metadata.total_count counts every ranked workload in scope, not only the returned ones.',
  authenticated: true,
  query: RankingQuery,
  response: Envelope(RankedWorkloads, CountMetadata),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle({ ctx, query, deps }) {
    const result = await rankWorkloads(
      deps,
      scopeOf(principalOf(ctx)),
      { sortBy: query.sort_by, order: query.order, limit: query.limit, initiativeId: query.initiative_id, status: query.status },
      deps.clock.now(),
    );
    return { body: { data: presentRanking(result), metadata: { total_count: result.totalCount } } };
  },
});
