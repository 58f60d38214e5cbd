// Every /v1 endpoint, in registration order: the fixed paths /stats and /metrics come before
// /{workload_id} so they are not taken for workload ids.
import type { Endpoint } from './endpoint.js';
import { capacityEndpoint } from './routes/capacity.js';
import { chargebackEndpoint } from './routes/chargeback.js';
import { fleetEndpoint, fleetNodesEndpoint } from './routes/fleet.js';
import { healthEndpoint } from './routes/health.js';
import { rankingEndpoint, workloadMetricsEndpoint } from './routes/metrics.js';
import { workloadStatsEndpoint } from './routes/stats.js';
import { getWorkloadEndpoint, listWorkloadsEndpoint } from './routes/workloads.js';

export function allEndpoints(): Endpoint[] {
  return [
    healthEndpoint,
    listWorkloadsEndpoint,
    workloadStatsEndpoint,
    rankingEndpoint,
    getWorkloadEndpoint,
    workloadMetricsEndpoint,
    capacityEndpoint,
    chargebackEndpoint,
    fleetEndpoint,
    fleetNodesEndpoint,
  ] as unknown as Endpoint[];
}
