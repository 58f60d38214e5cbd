// The Koa application of the public API. Middleware order (DESIGN "API"): request id → access log →
// private answers → error envelope → web console (its own paths only) → CORS (/v1 only) → router; per
// authenticated route: failed-authentication limit → auth → rate limit → readiness → validation. Paths are case-sensitive
// everywhere: /V1/workloads is an unknown path, not another spelling of /v1/workloads.
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa, { type Middleware, type Next } from 'koa';
import type { Logger } from 'pino';
import { validationError } from '../domain/errors.js';
import type { IndexReadiness } from '../query/ports.js';
import type { ApiContext, ApiState } from './context.js';
import { routerPath, type Endpoint, type ReadDeps } from './endpoint.js';
import { sendCsv, wantsCsv } from './csv/csv-response.js';
import type { ConsoleAssets } from './console/console-assets.js';
import { CONSOLE_ROUTES, serveConsole } from './console/console-routes.js';
import { allEndpoints } from './endpoints.js';
import { accessLog, type RequestObserver } from './middleware/access-log.js';
import { authFailureLimit } from './middleware/auth-failure-limit.js';
import { authenticate, type Authenticate } from './middleware/authenticate.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { privateAnswers } from './middleware/private-answers.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { requireReady } from './middleware/require-ready.js';
import { openApiDocument } from './openapi.js';
import type { RateLimiter } from './rate-limiter.js';
import { queryValidator } from './validate-query.js';

const OPENAPI_PATH = '/v1/openapi.json';

export interface ApiOptions {
  deps: ReadDeps;
  readiness: IndexReadiness;
  authenticator: Authenticate;
  rateLimiter: RateLimiter;
  corsAllowedOrigins: readonly string[];
  logger: Logger;
  observeRequest?: RequestObserver;
  /** The web console at `/`, or why it is not built (`missing`); absent: turned off. */
  console?: ConsoleAssets | { missing: string };
}

export function createApiApp(options: ApiOptions): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.proxy = false;
  // Errors are answered and logged by errorEnvelope; Koa's default handler would log them a second time.
  app.silent = true;
  const endpoints = allEndpoints();
  const openapi = openApiDocument(endpoints, options.deps.version);
  const router = new Router<ApiState>({ sensitive: true });
  const guard: Middleware<ApiState>[] = [
    authFailureLimit(options.authenticator.failureLimit, options.deps.clock),
    authenticate(options.authenticator),
    rateLimit(options.rateLimiter),
    requireReady(options.readiness),
  ];

  router.get(OPENAPI_PATH, async (ctx: ApiContext) => {
    ctx.state.route = OPENAPI_PATH;
    ctx.body = openapi;
  });
  for (const endpoint of endpoints) {
    router.get(routerPath(endpoint.path), routeName(endpoint), ...(endpoint.authenticated ? guard : []), handler(endpoint, options.deps));
  }

  app.use(requestId());
  app.use(accessLog(options.logger, options.observeRequest ?? (() => undefined)));
  app.use(privateAnswers(publicRoutes(endpoints)));
  app.use(errorEnvelope());
  if (options.console !== undefined) app.use(serveConsole(options.console));
  app.use(corsFor(options.corsAllowedOrigins));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** The routes whose answers are the same whoever asks: everything else is private (privateAnswers). */
function publicRoutes(endpoints: readonly Endpoint[]): ReadonlySet<string> {
  return new Set([
    OPENAPI_PATH,
    ...endpoints.filter((endpoint) => !endpoint.authenticated).map((endpoint) => endpoint.path),
    ...Object.values(CONSOLE_ROUTES),
  ]);
}

function routeName(endpoint: Endpoint) {
  return async (ctx: ApiContext, next: Next) => {
    ctx.state.route = endpoint.path;
    await next();
  };
}

function handler(endpoint: Endpoint, deps: ReadDeps) {
  const validate = queryValidator(endpoint.query);
  const paramPatterns = Object.entries(endpoint.pathParams ?? {}).map(
    ([name, schema]) => [name, new RegExp(schema.pattern ?? '.*')] as const,
  );
  return async (ctx: ApiContext) => {
    const params = (ctx as unknown as { params: Record<string, string> }).params;
    for (const [name, pattern] of paramPatterns) {
      if (!pattern.test(params[name] ?? '')) {
        throw validationError([
          {
            location: 'path',
            field: name,
            message: 'must be a workload id (a Kubernetes UID: letters, digits, ".", "_", ":", "-", at most 128)',
          },
        ]);
      }
    }
    const query = validate(ctx.query as Record<string, unknown>);
    if (endpoint.csv !== undefined) {
      ctx.vary('Accept');
      if (wantsCsv(ctx)) {
        sendCsv(ctx, await endpoint.csv({ ctx, query, params, deps }));
        return;
      }
    }
    const result = await endpoint.handle({ ctx, query, params, deps });
    ctx.status = result.status ?? 200;
    ctx.body = { ...result.body, request_id: ctx.state.requestId };
  };
}

/**
 * Browser dashboards on the allow-list may call the API; other origins get no CORS headers at all.
 * Only under /v1/ (case-sensitive, as the router): a preflight of /V1/workloads is an unknown path's 404.
 */
function corsFor(allowed: readonly string[]): Middleware<ApiState> {
  if (allowed.length === 0) return async (_ctx, next) => next();
  const any = allowed.includes('*');
  const answerCors = cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      return any || allowed.includes(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: ['Authorization', 'X-Organization-Id', 'X-Request-Id'],
    exposeHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
    keepHeadersOnError: true,
  }) as unknown as Middleware<ApiState>;
  return async (ctx, next) => (ctx.path.startsWith('/v1/') ? answerCors(ctx, next) : next());
}
