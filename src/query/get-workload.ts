// GET /v1/workloads/{id}: a workload outside the caller's organization or teams is NOT_FOUND, so
// its existence is not revealed (DECISIONS "Authentication and roles").
import { ApiError } from '../domain/errors.js';
import { canSeeInitiative, type Scope } from '../access/principal.js';
import type { WorkloadView } from '../domain/workload.js';
import type { WorkloadIndex } from './ports.js';

export async function getVisibleWorkload(index: WorkloadIndex, scope: Scope, workloadId: string, now: number): Promise<WorkloadView> {
  const workload = await index.get(workloadId, now);
  if (!workload || workload.organizationId !== scope.organizationId || !canSeeInitiative(scope, workload.initiativeId)) {
    throw new ApiError('NOT_FOUND', `Workload "${workloadId}" was not found`);
  }
  return workload;
}
