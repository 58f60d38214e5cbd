// GET /v1/health: anonymous, so it says ok or degraded and the version, nothing internal.
// 503 while the index is not yet synced (load balancers should not route to it); detail is on the admin port.
import { defineEndpoint } from '../endpoint.js';
import { NoQuery } from '../schemas/query.js';
import { Envelope, Health } from '../schemas/responses.js';

export const healthEndpoint = defineEndpoint({
  operationId: 'getHealth',
  path: '/v1/health',
  summary: 'Health',
  description:
    'No authentication. 200 `ok` when serving normally; 200 `degraded` when serving while a source (a cluster, the sampler) is failing; ' +
    '503 `degraded` until the workload index has synced, and once the service is shutting down.',
  authenticated: false,
  query: NoQuery,
  response: Envelope(Health),
  responseStatuses: [200, 503],
  errors: [],
  async handle({ deps }) {
    const serving = deps.health.acceptsTraffic();
    const status = serving && !deps.health.degraded() ? 'ok' : 'degraded';
    return { status: serving ? 200 : 503, body: { data: { status, version: deps.version } } };
  },
});
