// GET /v1/capacity.
import { scopeOf } from '../../access/principal.js';
import { capacity } from '../../query/capacity.js';
import { principalOf } from '../context.js';
import { capacityCsv } from '../csv/capacity-csv.js';
import { defineEndpoint, type EndpointRequest } from '../endpoint.js';
import { presentCapacity } from '../presenters.js';
import { CapacityQuery } from '../schemas/query.js';
import { Capacity, Envelope } from '../schemas/responses.js';

export const capacityEndpoint = defineEndpoint({
  operationId: 'getCapacity',
  path: '/v1/capacity',
  summary: 'GPU-hour budgets',
  description:
    'Allocated, used and remaining GPU-hours of the current budget period (UTC month, quarter, year, or total). ' +
    'Used counts pod GPU time inside the period, running workloads up to now; remaining may be negative. ' +
    'Every role sees every pool and its allocation; every used figure covers only the caller\'s teams (everything for ORG_ADMIN). ' +
    'An organization without a budget gets allocated 0, used as measured since ever, remaining = −used, and empty pools and initiatives. ' +
    'A pool_id or initiative_id that matches nothing narrows to nothing: 200 with empty lists (and zero figures for initiative_id).',
  authenticated: true,
  query: CapacityQuery,
  response: Envelope(Capacity),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle(request) {
    return { body: { data: await presentedCapacity(request) } };
  },
  async csv(request) {
    return capacityCsv(await presentedCapacity(request), request.deps.clock.now());
  },
});

async function presentedCapacity({ ctx, query, deps }: EndpointRequest<typeof CapacityQuery>) {
  const result = await capacity(
    deps,
    scopeOf(principalOf(ctx)),
    { initiativeId: query.initiative_id, poolId: query.pool_id },
    deps.clock.now(),
  );
  return presentCapacity(result);
}
