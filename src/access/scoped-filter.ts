// Turns the caller and the filters it asked for into a WorkloadFilter it may run, or a FORBIDDEN.
// The scope is applied on every read, so a filter can only narrow what the caller may see.
import { ApiError } from '../domain/errors.js';
import { canSeeInitiative, type Scope } from './principal.js';
import type { WorkloadFilter } from '../query/ports.js';

export function requireInitiativeInScope(scope: Scope, initiativeId: string | undefined): void {
  if (initiativeId !== undefined && !canSeeInitiative(scope, initiativeId)) {
    throw new ApiError('FORBIDDEN', `Initiative "${initiativeId}" is outside the caller's teams`);
  }
}

export function requireOrganization(scope: Scope, organizationId: string | undefined): void {
  if (organizationId !== undefined && organizationId !== scope.organizationId) {
    throw new ApiError('FORBIDDEN', `Organization "${organizationId}" is not the caller's organization`);
  }
}

/**
 * Nodes and clusters are shared infrastructure, no team's: only a scope over the whole organization
 * (ORG_ADMIN) reads them (docs/api.md, "Who sees what").
 */
export function requireWholeOrganization(scope: Scope, what: string): void {
  if (scope.initiatives !== null) throw new ApiError('FORBIDDEN', `${what} is shared infrastructure: only an ORG_ADMIN may read it`);
}

export function scopedFilter(scope: Scope, filters: Omit<WorkloadFilter, 'scope'> = {}): WorkloadFilter {
  requireInitiativeInScope(scope, filters.initiativeId);
  return { scope, ...filters };
}
