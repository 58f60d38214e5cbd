// 429 RATE_LIMITED with Retry-After once a principal has used up its bucket.
import type { Next } from 'koa';
import { ApiError } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import type { RateLimiter } from '../rate-limiter.js';

export function rateLimit(limiter: RateLimiter) {
  return async function rateLimitMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const decision = limiter.take(ctx.state.principal?.id ?? `ip:${ctx.ip}`);
    if (!decision.allowed) {
      throw new ApiError('RATE_LIMITED', `Too many requests; retry in ${decision.retryAfterSeconds} s`, {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
    await next();
  };
}
