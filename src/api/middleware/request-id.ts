// Echo a caller's X-Request-Id when it is safe to log and return (DECISIONS: ≤128 chars of
// [A-Za-z0-9._:-]); otherwise make one. Every response, errors included, carries it.
import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { ApiContext } from '../context.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(generate: () => string = randomUUID) {
  return async function requestIdMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = SAFE_ID.test(given) ? given : generate();
    ctx.state.route = 'unmatched';
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
