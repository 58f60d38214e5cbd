// GET /v1/fleet and GET /v1/fleet/nodes: the organization's GPU nodes, for ORG_ADMIN only.
import { Type } from '@sinclair/typebox';
import { scopeOf } from '../../access/principal.js';
import { fleetOverview } from '../../query/fleet.js';
import { fleetNodes, listFleetNodes } from '../../query/fleet-nodes.js';
import { principalOf } from '../context.js';
import { fleetCsv, fleetNodesCsv } from '../csv/fleet-csv.js';
import { defineEndpoint, type EndpointRequest } from '../endpoint.js';
import { presentFleet, presentFleetNode } from '../fleet-presenters.js';
import { Fleet, FleetNodeItem, FleetNodesQuery, FleetQuery } from '../schemas/fleet.js';
import { Envelope, ListMetadata } from '../schemas/responses.js';
import { instant } from './workloads.js';

const WHO = 'ORG_ADMIN only: nodes are shared infrastructure, no team\'s (TEAM_LEAD and MEMBER get FORBIDDEN). ' +
  'The nodes of the clusters whose configured organization is the caller\'s, as every replica watches them now.';

const filtersOf = (query: { cluster_id?: string; gpu_model?: string; pool_id?: string }) => ({
  clusterId: query.cluster_id,
  gpuModel: query.gpu_model,
  poolId: query.pool_id,
});

export const fleetEndpoint = defineEndpoint({
  operationId: 'getFleet',
  path: '/v1/fleet',
  summary: 'The GPUs of the fleet',
  description: 'Addition: every GPU of the organization\'s clusters now, allocated, unallocated or unavailable, and their ' +
    'GPU-hours over a range of the statistics, by group and as a series (docs/fleet.md). ' + WHO,
  authenticated: true,
  query: FleetQuery,
  response: Envelope(Fleet),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle(request) {
    return { body: { data: await presentedFleet(request) } };
  },
  async csv(request) {
    return fleetCsv(await presentedFleet(request), principalOf(request.ctx).organizationId, request.deps.clock.now());
  },
});

async function presentedFleet({ ctx, query, deps }: EndpointRequest<typeof FleetQuery>) {
  const overview = await fleetOverview({ ...deps, now: deps.clock.now() }, scopeOf(principalOf(ctx)), {
    ...filtersOf(query),
    groupBy: query.group_by,
    timeRange: query.time_range,
    startDate: instant(query.start_date),
    endDate: instant(query.end_date),
    interval: query.interval,
  });
  return presentFleet(overview);
}

export const fleetNodesEndpoint = defineEndpoint({
  operationId: 'listFleetNodes',
  path: '/v1/fleet/nodes',
  summary: 'The GPU nodes of the fleet',
  description: 'Addition: the GPU nodes now, by cluster_id then node, paged with metadata.next_token like the workloads. ' + WHO,
  authenticated: true,
  query: FleetNodesQuery,
  response: Envelope(Type.Object({ nodes: Type.Array(FleetNodeItem) }, { additionalProperties: false }), ListMetadata),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle({ ctx, query, deps }) {
    const result = await listFleetNodes(deps, scopeOf(principalOf(ctx)), {
      ...filtersOf(query), state: query.state, limit: query.limit, nextToken: query.next_token,
    });
    return {
      body: {
        data: { nodes: result.nodes.map(presentFleetNode) },
        metadata: { ...(result.nextToken === null ? {} : { next_token: result.nextToken }), total_count: result.totalCount },
      },
    };
  },
  // Every node that matches: a fleet's nodes are thousands at most.
  csv({ ctx, query, deps }) {
    const principal = principalOf(ctx);
    const nodes = fleetNodes(deps, scopeOf(principal), { ...filtersOf(query), state: query.state });
    return Promise.resolve(fleetNodesCsv(nodes.map(presentFleetNode), principal.organizationId, deps.clock.now()));
  },
});
