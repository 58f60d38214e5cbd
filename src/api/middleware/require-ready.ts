// Until the index holds a complete picture, answers would be silently incomplete: refuse with 503.
import type { Next } from 'koa';
import { ApiError } from '../../domain/errors.js';
import type { IndexReadiness } from '../../query/ports.js';
import type { ApiContext } from '../context.js';

export function requireReady(readiness: IndexReadiness) {
  return async function requireReadyMiddleware(_ctx: ApiContext, next: Next): Promise<void> {
    if (!readiness.isReady()) {
      throw new ApiError('UNAVAILABLE', 'The workload index is still synchronizing with the clusters; retry shortly', {
        headers: { 'Retry-After': '5' },
      });
    }
    await next();
  };
}
