// What the middleware chain leaves on ctx.state for the routes.
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { Principal } from '../access/principal.js';

export interface ApiState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  /** Route template (`/v1/workloads/{workload_id}`) for metrics and logs; unmatched paths stay `unmatched`. */
  route: string;
}

export type ApiContext = ParameterizedContext<ApiState>;

export function principalOf(ctx: ApiContext): Principal {
  const principal = ctx.state.principal;
  if (!principal) throw new Error('Route reached without authentication: the auth middleware is missing');
  return principal;
}
