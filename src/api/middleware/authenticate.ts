// Bearer credential → Principal, then the organization header (DECISIONS "Authentication and roles"):
// missing X-Organization-Id is a VALIDATION_ERROR, another organization than the token's is FORBIDDEN.
import type { Next } from 'koa';
import { ApiError, validationError } from '../../domain/errors.js';
import type { Principal } from '../../access/principal.js';
import type { ApiContext } from '../context.js';
import type { AuthFailureLimit } from './auth-failure-limit.js';

export interface Authenticate {
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** How many failed authentications a client address may have, enforced before this middleware. */
  readonly failureLimit: AuthFailureLimit;
}

export function authenticate(authenticator: Authenticate) {
  return async function authenticateMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const principal = await authenticator.authenticate(ctx.get('Authorization') || undefined);
    ctx.state.principal = principal;
    const organization = ctx.get('X-Organization-Id');
    if (organization === '') {
      throw validationError([{ location: 'header', field: 'X-Organization-Id', message: 'is required' }]);
    }
    if (organization !== principal.organizationId) {
      throw new ApiError('FORBIDDEN', `Organization "${organization.slice(0, 128)}" is not the organization of the credential`);
    }
    await next();
  };
}
