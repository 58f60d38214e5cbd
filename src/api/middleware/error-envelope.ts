// First handler of every error (STYLE "HTTP errors"): ApiErrors become the contract's error body, and
// so do the errors below HTTP that mean one (asApiError); anything else is a 500 whose message says
// nothing internal, logged here with the request_id. Also gives router-produced 404/405/501 responses
// (which carry no body) the same error body.
import type { Next } from 'koa';
import { ApiError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../../domain/errors.js';
import { IndexBusyError } from '../../query/ports.js';
import type { ApiContext } from '../context.js';

export function errorEnvelope() {
  return async function errorEnvelopeMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) fillBodylessError(ctx);
    } catch (error) {
      const apiError = asApiError(error);
      if (apiError !== undefined) return respond(ctx, apiError);
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

/**
 * The contract's error an error stands for, recognized by its fields: the API does not import the
 * store, whose errors know nothing of HTTP. Two kinds reach here without being an ApiError:
 * - an ApiError thrown in a read worker comes back as an Error of that name with the same fields
 *   (src/store/read-errors.ts rebuilds no class of the layers above it);
 * - the index's refusal for now (IndexBusyError, an error of the query ports), whose message is
 *   written for the caller.
 */
function asApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (!(error instanceof Error)) return undefined;
  const { code, details, headers } = error as Error & Record<'code' | 'details' | 'headers', unknown>;
  if (error.name === 'ApiError' && typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code)) {
    return new ApiError(code as ErrorCode, error.message, {
      details: Array.isArray(details) ? (details as ErrorDetail[]) : undefined,
      headers: typeof headers === 'object' && headers !== null ? (headers as Record<string, string>) : undefined,
    });
  }
  if (error instanceof IndexBusyError) {
    // Retry-After takes whole seconds; rounding down could invite a retry before the pause is over.
    return new ApiError('UNAVAILABLE', error.message, {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(error.retryAfterSeconds))) },
    });
  }
  return undefined;
}

function fillBodylessError(ctx: ApiContext): void {
  if (ctx.status === 404) {
    respond(ctx, new ApiError('NOT_FOUND', `No endpoint at ${ctx.path}`));
  } else if (ctx.status === 405 || ctx.status === 501) {
    const allow = String(ctx.response.get('Allow') || 'GET, HEAD');
    respond(
      ctx,
      new ApiError('METHOD_NOT_ALLOWED', `Method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, {
        headers: { Allow: allow },
      }),
    );
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
