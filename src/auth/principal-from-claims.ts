// Turns the claims of a verified JWT into a Principal. The claim names are configurable (identity
// providers differ); the values are strict, and a 401 names the claim that is wrong.
import type { JWTPayload } from 'jose';
import { ROLES, type Principal, type Role } from '../access/principal.js';
import { invalidToken } from './unauthenticated.js';

export interface ClaimNames {
  organization: string;
  role: string;
  initiatives: string;
}

/** Throws ApiError UNAUTHENTICATED naming the claim when one is missing or has the wrong shape. */
export function principalFromClaims(payload: JWTPayload, names: ClaimNames): Principal {
  const claim = (name: string): unknown => (Object.hasOwn(payload, name) ? payload[name] : undefined);

  const iss = claim('iss');
  const sub = claim('sub');
  if (typeof iss !== 'string' || iss === '') throw invalidToken('Token claim "iss" must be a non-empty string');
  if (typeof sub !== 'string' || sub === '') throw invalidToken('Token claim "sub" must be a non-empty string');

  const organizationId = claim(names.organization);
  if (typeof organizationId !== 'string' || organizationId === '') {
    throw invalidToken(`Token claim "${names.organization}" must be a non-empty string`);
  }

  const role = claim(names.role);
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    throw invalidToken(`Token claim "${names.role}" must be one of ${ROLES.join(', ')}`);
  }

  const initiatives = claim(names.initiatives) ?? [];
  if (!Array.isArray(initiatives) || !initiatives.every((item) => typeof item === 'string' && item !== '')) {
    throw invalidToken(`Token claim "${names.initiatives}" must be an array of strings`);
  }

  return {
    id: `jwt:${iss}:${sub}`,
    kind: 'jwt',
    organizationId,
    role: role as Role,
    initiatives: Object.freeze([...new Set(initiatives as string[])]),
  };
}
