// GET /v1/workloads: keyset pages in the order submitted_at DESC, workload_id DESC.
import { ApiError, validationError } from '../domain/errors.js';
import type { Scope } from '../access/principal.js';
import type { WorkloadRecord, WorkloadStatus } from '../domain/workload.js';
import { requireOrganization, scopedFilter } from '../access/scoped-filter.js';
import { decodeCursor, encodeCursor, filterDigest } from './cursor.js';
import type { WorkloadIndex } from './ports.js';

export interface ListWorkloadsRequest {
  organizationId?: string;
  initiativeId?: string;
  status?: WorkloadStatus;
  submittedBy?: string;
  isManaged?: boolean;
  startDate?: number;
  endDate?: number;
  limit: number;
  nextToken?: string;
}

export interface ListWorkloadsResult {
  workloads: WorkloadRecord[];
  nextToken: string | null;
  totalCount: number;
}

export async function listWorkloads(index: WorkloadIndex, scope: Scope, request: ListWorkloadsRequest): Promise<ListWorkloadsResult> {
  requireOrganization(scope, request.organizationId);
  if (request.startDate !== undefined && request.endDate !== undefined && request.endDate <= request.startDate) {
    throw validationError([{ location: 'query', field: 'end_date', message: 'must be after start_date' }]);
  }
  const filter = scopedFilter(scope, {
    initiativeId: request.initiativeId,
    status: request.status,
    submittedBy: request.submittedBy,
    isManaged: request.isManaged,
    submittedFrom: request.startDate,
    submittedBefore: request.endDate,
  });
  // The digest covers what decides the result set, the caller's scope included; not the page size.
  // Teams are a set: an identity provider may list them in another order in a refreshed token.
  const teams = scope.initiatives === null ? null : [...new Set(scope.initiatives)].sort();
  const digest = filterDigest({ ...filter, scope: undefined, org: scope.organizationId, teams });
  const key = await index.cursorKey();
  let after = null;
  if (request.nextToken !== undefined) {
    const decoded = decodeCursor(request.nextToken, digest, key);
    if (decoded === 'malformed') throw cursorError('is not a token this service issued');
    if (decoded === 'other_filters') throw cursorError('was issued for other filters; repeat the filters of the first page');
    after = decoded;
  }
  const page = await index.list(filter, { limit: request.limit, after });
  const last = page.items.at(-1);
  return {
    workloads: page.items,
    nextToken: page.hasMore && last ? encodeCursor({ submittedAt: last.submittedAt, workloadId: last.workloadId }, digest, key) : null,
    totalCount: page.totalCount,
  };
}

function cursorError(message: string): ApiError {
  return validationError([{ location: 'query', field: 'next_token', message }]);
}
