// The admin port: probes for the kubelet and metrics for Prometheus. It is never exposed publicly
// (the chart keeps it off the API Service's public port). /livez and /readyz are open (a kubelet
// sends no credentials) and name no tenant; /metrics names every organization, team and budget, so
// with admin_auth kubernetes it answers only a bearer token the API server lets `get` /metrics.
import Router from '@koa/router';
import Koa from 'koa';
import type { Registry } from 'prom-client';
import type { AccessDecision, AccessOutcome } from './metrics-access.js';
import type { ReadinessTracker } from './readiness.js';

export interface LivenessCheck {
  name: string;
  /** null when alive; otherwise why not (a loop that stopped ticking). See liveness-checks.ts. */
  problem(): string | null;
}

export interface AdminOptions {
  readiness: ReadinessTracker;
  registry: Registry;
  liveness?: readonly LivenessCheck[];
  /** Component states shown under /readyz `components` (authentication, retention, clusters, capacity, telemetry). */
  components?: () => Record<string, unknown>;
  /** Who may read /metrics (metrics-access.ts); absent with admin_auth none: anyone. */
  metricsAccess?: { decide(authorization: string | undefined): Promise<AccessDecision> };
}

const REFUSAL: Record<Exclude<AccessOutcome, 'allowed'>, { status: number; code: string }> = {
  unauthenticated: { status: 401, code: 'UNAUTHENTICATED' },
  forbidden: { status: 403, code: 'FORBIDDEN' },
  error: { status: 503, code: 'UNAVAILABLE' },
};
/** A scrape that met an API server outage tries again at its next interval anyway; this says so to others. */
const RETRY_AFTER_SECONDS = '5';

export function createAdminApp(options: AdminOptions): Koa {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  router.get('/livez', (ctx) => {
    const checks = options.liveness ?? [];
    const problems = checks.map((c) => ({ name: c.name, problem: c.problem() })).filter((c) => c.problem !== null);
    ctx.status = problems.length === 0 ? 200 : 503;
    // The names of the checks run, so that an operator (and a test) sees what "ok" covered.
    ctx.body = { status: problems.length === 0 ? 'ok' : 'failing', checks: checks.map((c) => c.name), problems };
  });
  router.get('/readyz', (ctx) => {
    const report = options.readiness.report();
    ctx.status = report.ready ? 200 : 503;
    ctx.body = { ...report, components: options.components?.() ?? {} };
  });
  router.get('/metrics', async (ctx) => {
    const decision = await options.metricsAccess?.decide(ctx.get('authorization') || undefined);
    if (decision !== undefined && decision.outcome !== 'allowed') {
      const refusal = REFUSAL[decision.outcome];
      ctx.status = refusal.status;
      if (decision.outcome === 'unauthenticated') {
        ctx.set('WWW-Authenticate', decision.noBearerToken === true ? 'Bearer' : 'Bearer error="invalid_token"');
      }
      if (decision.outcome === 'error') ctx.set('Retry-After', RETRY_AFTER_SECONDS);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: { code: refusal.code, message: decision.message } };
      return;
    }
    ctx.type = options.registry.contentType;
    ctx.body = await options.registry.metrics();
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
