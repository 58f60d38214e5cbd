// Failed authentications, limited per client address before any credential is looked at: a client
// that keeps failing (guessing API tokens, replaying expired JWTs, naming made-up `kid`s to make us
// fetch the JWKS) gets 429 without the hashing, parsing or fetching its next attempt would cost.
// Only a 401 takes from the bucket, so callers with good credentials never run it down.
// The address is the socket's peer (app.proxy is off, so ctx.ip ignores X-Forwarded-For, which any
// client can write): behind a proxy, every client shares the proxy's bucket.
import type { Next } from 'koa';
import type { Clock } from '../../domain/clock.js';
import { ApiError } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import { RateLimiter } from '../rate-limiter.js';

export interface AuthFailureLimit {
  /** Failures per second an address may sustain (bucket refill); 0 turns the limit off. */
  perSecond: number;
  /** Failures an address may have at once (bucket size). */
  burst: number;
}

/** Addresses tracked at once: beyond it, the one that failed least recently is forgotten. */
export const MAX_TRACKED_ADDRESSES = 10_000;

export function authFailureLimit(limit: AuthFailureLimit, clock: Clock, maxAddresses = MAX_TRACKED_ADDRESSES) {
  const failures = new RateLimiter({ perSecond: limit.perSecond, burst: limit.burst, maxKeys: maxAddresses }, clock);
  return async function authFailureLimitMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const client = ctx.ip;
    const decision = failures.check(client);
    if (!decision.allowed) {
      throw new ApiError('RATE_LIMITED', `Too many failed authentications from this address; retry in ${decision.retryAfterSeconds} s`, {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
    try {
      await next();
    } catch (error) {
      // Concurrent failures may each pass the check above: the overshoot is at most the address's
      // requests in flight, and reserving a token per request instead would throttle good callers.
      if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') failures.take(client);
      throw error;
    }
  };
}
