// First handler of every error (STYLE "HTTP errors"): ApiErrors become the contract's error body;
// anything else is a 500 whose message says nothing internal, logged here with the request_id.
// Also gives router-produced 404/405/501 responses (which carry no body) the same error body.
import type { Next } from 'koa';
import { ApiError, type ErrorCode } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';

export function errorEnvelope() {
  return async function errorEnvelopeMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) fillBodylessError(ctx);
    } catch (error) {
      if (error instanceof ApiError) return respond(ctx, error);
      const status = (error as { status?: number }).status;
      const expose = (error as { expose?: boolean }).expose === true;
      if (typeof status === 'number' && status >= 400 && status < 500 && expose) {
        return respond(ctx, new ApiError(codeForStatus(status), (error as Error).message));
      }
      ctx.state.log.error({ err: error }, 'request failed');
      respond(ctx, new ApiError('INTERNAL', 'Internal error; quote the request_id when reporting it'));
    }
  };
}

function fillBodylessError(ctx: ApiContext): void {
  if (ctx.status === 404) {
    respond(ctx, new ApiError('NOT_FOUND', `No endpoint at ${ctx.path}`));
  } else if (ctx.status === 405 || ctx.status === 501) {
    const allow = String(ctx.response.get('Allow') || 'GET, HEAD');
    respond(ctx, new ApiError('METHOD_NOT_ALLOWED', `Method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { headers: { Allow: allow } }));
  }
}

function respond(ctx: ApiContext, error: ApiError): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.body = { error: { code: error.code, message: error.message, details: error.details }, request_id: ctx.state.requestId };
}

function codeForStatus(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 405) return 'METHOD_NOT_ALLOWED';
  if (status === 429) return 'RATE_LIMITED';
  return 'VALIDATION_ERROR';
}
