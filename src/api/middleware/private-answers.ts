// Answers of the authenticated endpoints hold one caller's view of one organization. `no-store` keeps
// them out of every cache (a proxy, a CDN, the browser's disk), and Vary names the request headers
// they depend on, so a cache that keeps them anyway cannot hand them to another credential or
// organization. Errors and CSV downloads too: a 403 or a file says as much about a tenant as a 200.
//
// Set once the answer is complete, outermost of the error envelope, so that nothing later replaces
// them (the envelope sets the Vary that CORS gives an error); Vary is appended to, never replaced.
// Every route is private unless named public: an endpoint added later is safe by default.
import type { Next } from 'koa';
import type { ApiContext } from '../context.js';

export const PRIVATE_CACHE_CONTROL = 'no-store';
export const PRIVATE_VARY = ['Authorization', 'X-Organization-Id'];

/** `publicRoutes`: route templates (ctx.state.route) whose answers are the same for everyone. */
export function privateAnswers(publicRoutes: ReadonlySet<string>) {
  return async function privateAnswersMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    await next();
    if (publicRoutes.has(ctx.state.route)) return;
    ctx.set('Cache-Control', PRIVATE_CACHE_CONTROL);
    ctx.vary(PRIVATE_VARY);
  };
}
