// GET /v1/health: anonymous, in the shape strict generated clients expect (`healthy` | `unhealthy`).
// Healthy whenever the index answers, even while a source fails: what is degraded is in `checks`,
// one entry per source, without reasons (those stay on the admin port). 503 while it cannot answer.
// A replica draining after SIGTERM still answers every request, so it stays healthy here: only the
// admin port's /readyz turns it away, which is what takes it out of the Service's endpoints. A 503
// here would reach the clients whose requests arrive before that, as a failure in a rolling restart.
import { toIso } from '../../domain/time.js';
import { defineEndpoint } from '../endpoint.js';
import { healthChecks } from '../health-checks.js';
import { NoQuery } from '../schemas/query.js';
import { Envelope, Health } from '../schemas/responses.js';

export const healthEndpoint = defineEndpoint({
  operationId: 'getHealth',
  path: '/v1/health',
  summary: 'Health',
  description:
    'No authentication. 200 `healthy` while the service answers from its index, also while a cluster, the exporters or the budgets fail ' +
    '(that source\'s entry in `checks` is then `degraded`), and while a stopping ' +
    'replica drains its last requests; 503 `unhealthy` until the index has synced once.',
  authenticated: false,
  query: NoQuery,
  response: Envelope(Health),
  responseStatuses: [200, 503],
  errors: [],
  async handle({ deps }) {
    const serving = deps.health.isReady();
    return {
      status: serving ? 200 : 503,
      body: {
        data: {
          status: serving ? 'healthy' : 'unhealthy',
          version: deps.version,
          timestamp: toIso(deps.clock.now()),
          checks: healthChecks(deps.health.report().conditions),
        },
      },
    };
  },
});
