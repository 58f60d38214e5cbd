// GET /v1/health: anonymous, so it says ok or degraded and the version, nothing internal.
// 503 while the index is not yet synced (load balancers should not route to it); detail is on the admin port.
import type { IndexReadiness } from '../../query/ports.js';
import { defineEndpoint } from '../endpoint.js';
import { NoQuery } from '../schemas/query.js';
import { Envelope, Health } from '../schemas/responses.js';

export function healthEndpoint(readiness: IndexReadiness) {
  return defineEndpoint({
    operationId: 'getHealth',
    path: '/v1/health',
    summary: 'Health',
    description:
      'No authentication. 200 `ok` when serving normally; 200 `degraded` when serving while a source (a cluster, the sampler) is failing; ' +
      '503 `degraded` until the workload index has synced.',
    authenticated: false,
    query: NoQuery,
    response: Envelope(Health),
    responseStatuses: [200, 503],
    errors: [],
    async handle({ deps }) {
      const ready = readiness.isReady();
      const status = ready && !deps.health.degraded() ? 'ok' : 'degraded';
      return { status: ready ? 200 : 503, body: { data: { status, version: deps.version } } };
    },
  });
}
