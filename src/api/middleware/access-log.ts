// One log line per request with its request_id, and the latency observation for /metrics.
// Headers are never logged, so Authorization and tokens cannot leak through here.
import type { Next } from 'koa';
import type { Logger } from 'pino';
import type { ApiContext } from '../context.js';

export type RequestObserver = (sample: { route: string; method: string; status: number; seconds: number }) => void;

export function accessLog(logger: Logger, observe: RequestObserver) {
  return async function accessLogMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    ctx.state.log = logger.child({ request_id: ctx.state.requestId });
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      observe({ route: ctx.state.route, method: ctx.method, status: ctx.status, seconds });
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          route: ctx.state.route,
          status: ctx.status,
          ms: Math.round(seconds * 1e4) / 10,
          principal: ctx.state.principal?.id,
        },
        'request',
      );
    }
  };
}
