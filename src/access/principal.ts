// Who is calling, once a credential has been verified. Both JWTs and API tokens end up as this.

export const ROLES = ['ORG_ADMIN', 'TEAM_LEAD', 'MEMBER'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /** Stable id for logs and rate limiting: the JWT `sub` (prefixed by issuer) or the API token record id. */
  id: string;
  kind: 'jwt' | 'api_token';
  organizationId: string;
  role: Role;
  initiatives: readonly string[];
}

/**
 * The workloads a principal may see inside its organization. `initiatives: null` means every
 * initiative (ORG_ADMIN); TEAM_LEAD and MEMBER see only their own (DECISIONS "Authentication and roles").
 */
export interface Scope {
  organizationId: string;
  initiatives: readonly string[] | null;
}

export function scopeOf(principal: Principal): Scope {
  return {
    organizationId: principal.organizationId,
    initiatives: principal.role === 'ORG_ADMIN' ? null : principal.initiatives,
  };
}

export function canSeeInitiative(scope: Scope, initiativeId: string): boolean {
  return scope.initiatives === null || scope.initiatives.includes(initiativeId);
}
