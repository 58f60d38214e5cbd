// GET /v1/workloads and GET /v1/workloads/{workload_id}.
import { Type } from '@sinclair/typebox';
import { parseIsoInstant } from '../../domain/time.js';
import { scopeOf } from '../../access/principal.js';
import { getVisibleWorkload } from '../../query/get-workload.js';
import { workloadCost } from '../../query/workload-cost.js';
import { exportWorkloads } from '../../query/export-workloads.js';
import { listWorkloads } from '../../query/list-workloads.js';
import { principalOf } from '../context.js';
import { workloadsCsv } from '../csv/workloads-csv.js';
import { defineEndpoint, type EndpointRequest } from '../endpoint.js';
import { presentListItem, presentWorkload } from '../presenters.js';
import { WORKLOAD_ID_PATTERN } from '../schemas/primitives.js';
import { ListWorkloadsQuery, NoQuery } from '../schemas/query.js';
import { Envelope, ListMetadata, Workload, WorkloadListItem } from '../schemas/responses.js';

export const WorkloadIdParam = Type.String({ pattern: WORKLOAD_ID_PATTERN, description: 'The workload\'s Kubernetes UID.' });

/** Dates passed the `instant` format check already; this only converts them. */
export function instant(text: string | undefined): number | undefined {
  return text === undefined ? undefined : (parseIsoInstant(text) ?? undefined);
}

export const listWorkloadsEndpoint = defineEndpoint({
  operationId: 'listWorkloads',
  path: '/v1/workloads',
  summary: 'List workloads',
  description:
    'Workloads visible to the caller, newest first (submitted_at descending, then workload_id descending). ' +
    'Page with metadata.next_token, repeating the same filters; it is absent on the last page. total_count counts every match.',
  authenticated: true,
  query: ListWorkloadsQuery,
  response: Envelope(Type.Object({ workloads: Type.Array(WorkloadListItem) }, { additionalProperties: false }), ListMetadata),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle({ ctx, query, deps }) {
    const result = await listWorkloads(deps.index, scopeOf(principalOf(ctx)), { ...listFilters(query), limit: query.limit });
    return {
      body: {
        data: { workloads: result.workloads.map(presentListItem) },
        // Absent on the last page: strict clients take next_token for a string whenever it is there.
        metadata: { ...(result.nextToken === null ? {} : { next_token: result.nextToken }), total_count: result.totalCount },
      },
    };
  },
  // Every match, unless the request names a limit: its default is JSON's page size, not the export's.
  async csv({ ctx, query, deps }: EndpointRequest<typeof ListWorkloadsQuery>) {
    const principal = principalOf(ctx);
    const limit = Object.hasOwn(ctx.query, 'limit') ? query.limit : undefined;
    const exported = await exportWorkloads(deps.index, scopeOf(principal), { ...listFilters(query), limit });
    return workloadsCsv(exported, principal.organizationId, deps.clock.now());
  },
});

function listFilters(query: ListWorkloadsQuery) {
  return {
    organizationId: query.organization_id,
    initiativeId: query.initiative_id,
    status: query.status,
    submittedBy: query.submitted_by,
    isManaged: query.is_managed,
    startDate: instant(query.start_date),
    endDate: instant(query.end_date),
    nextToken: query.next_token,
  };
}

export const getWorkloadEndpoint = defineEndpoint({
  operationId: 'getWorkload',
  path: '/v1/workloads/{workload_id}',
  summary: 'Get one workload',
  description: 'The full record. A workload outside the caller\'s organization or teams answers NOT_FOUND, like one that does not exist.',
  authenticated: true,
  query: NoQuery,
  pathParams: { workload_id: WorkloadIdParam },
  response: Envelope(Workload),
  errors: ['VALIDATION_ERROR', 'NOT_FOUND'],
  async handle({ ctx, params, deps }) {
    const now = deps.clock.now();
    const workload = await getVisibleWorkload(deps.index, scopeOf(principalOf(ctx)), params.workload_id ?? '', now);
    const prices = deps.prices?.pricesFor(workload.organizationId);
    const cost = prices === undefined ? undefined : workloadCost(workload, await deps.index.podGpuTimes(workload), prices, now);
    return { body: { data: presentWorkload(workload, cost) } };
  },
});
