// The admin port: probes for the kubelet and metrics for Prometheus. It is never exposed publicly
// (the chart keeps it off the API Service's public port), so /readyz may show condition names.
import Router from '@koa/router';
import Koa from 'koa';
import type { Registry } from 'prom-client';
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
}

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
    ctx.type = options.registry.contentType;
    ctx.body = await options.registry.metrics();
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
