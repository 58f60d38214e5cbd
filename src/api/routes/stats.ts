// GET /v1/workloads/stats.
import { scopeOf } from '../../access/principal.js';
import { workloadStats } from '../../query/workload-stats.js';
import { principalOf } from '../context.js';
import { statsCsv } from '../csv/stats-csv.js';
import { defineEndpoint, type EndpointRequest } from '../endpoint.js';
import { presentStats } from '../presenters.js';
import { WorkloadStatsQuery } from '../schemas/query.js';
import { Envelope, WorkloadStats } from '../schemas/responses.js';
import { parsePercentiles } from './metrics.js';
import { instant } from './workloads.js';

export const workloadStatsEndpoint = defineEndpoint({
  operationId: 'getWorkloadStatistics',
  path: '/v1/workloads/stats',
  summary: 'Workload statistics',
  description:
    'Figures over the workloads submitted in the time range (default last_30_days), optionally grouped. ' +
    'today / this_week (ISO, Monday) / this_month start at 00:00 UTC; last_7_days / last_30_days roll back from now. ' +
    'average_duration_seconds covers workloads that started; success_rate = completed / (completed + failed), 0 when none; ' +
    'running workloads count with their GPU-hours up to now.',
  authenticated: true,
  query: WorkloadStatsQuery,
  response: Envelope(WorkloadStats),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle(request) {
    return { body: { data: await presentedStats(request) } };
  },
  async csv(request) {
    const { ctx, query, deps } = request;
    const options = {
      groupBy: query.group_by,
      interval: query.interval !== undefined,
      organizationId: principalOf(ctx).organizationId,
      now: deps.clock.now(),
    };
    return statsCsv(await presentedStats(request), options);
  },
});

async function presentedStats({ ctx, query, deps }: EndpointRequest<typeof WorkloadStatsQuery>) {
  const result = await workloadStats(
    deps.index,
    scopeOf(principalOf(ctx)),
    {
      timeRange: query.time_range,
      startDate: instant(query.start_date),
      endDate: instant(query.end_date),
      groupBy: query.group_by,
      initiativeId: query.initiative_id,
      interval: query.interval,
      queuePercentiles: parsePercentiles(query.queue_percentiles),
    },
    deps.clock.now(),
    deps.prices?.pricesFor(principalOf(ctx).organizationId),
  );
  return presentStats(result, query.group_by);
}
