// The /v1 API (and the web console) on its port, behind the authenticator. Both stop in the drain
// phase, before anything the requests read.
import type { Logger } from 'pino';
import type { ReadinessTracker } from '../admin/readiness.js';
import { createApiApp } from '../api/app.js';
import { ConsoleAssetsMissingError, loadConsoleAssets, type ConsoleAssets } from '../api/console/console-assets.js';
import { RateLimiter } from '../api/rate-limiter.js';
import { createAuthenticator, type StatusReportingAuthenticator } from '../auth/authenticator.js';
import type { BudgetSource, FleetSource, PriceSource, TelemetryReader, WorkloadIndex } from '../query/ports.js';
import { listen, type Listener } from '../runtime/http-listener.js';
import { defaultConsoleAssetsDir } from '../runtime/package-root.js';
import type { ServiceContext } from './service-context.js';

/** What the API reads, and how it reports its own state. */
export interface ApiSources {
  index: WorkloadIndex;
  telemetry: TelemetryReader;
  budgets: BudgetSource;
  prices: PriceSource | undefined;
  fleet: FleetSource;
  readiness: ReadinessTracker;
  version: string;
}

export interface RunningApi {
  authenticator: StatusReportingAuthenticator;
  listener: Listener;
}

/** The built console, or why there is none: a service without it still serves the API. */
function consoleAssets(configured: string | undefined, logger: Logger): ConsoleAssets | { missing: string } {
  const dir = configured ?? defaultConsoleAssetsDir() ?? 'dist/console';
  try {
    return loadConsoleAssets(dir);
  } catch (error) {
    if (!(error instanceof ConsoleAssetsMissingError)) throw error;
    logger.warn({ dir }, error.message);
    return { missing: error.message };
  }
}

export async function startApi(context: ServiceContext, sources: ApiSources): Promise<RunningApi> {
  const { config, metrics, clock, logger, parts } = context;
  const { index, telemetry, budgets, prices, fleet, readiness, version } = sources;
  const authenticator = createAuthenticator(config, { clock, logger });
  // Closed once the listener has drained: only requests use it.
  parts.phase('drain').add('authenticator', () => authenticator.close());
  const api = createApiApp({
    deps: { index, telemetry, budgets, ...(prices === undefined ? {} : { prices }), fleet, health: readiness, clock, version },
    readiness,
    authenticator,
    rateLimiter: new RateLimiter({ perSecond: config.rate_limit_per_second, burst: config.rate_limit_burst }, clock),
    corsAllowedOrigins: config.cors_allowed_origins,
    logger,
    observeRequest: metrics.observeRequest,
    ...(config.console_enabled ? { console: consoleAssets(config.console_assets_dir, logger) } : {}),
  });
  const listener = await listen(api.callback(), config.listen);
  // The first undone, so the shutdown drains requests before anything they read stops.
  parts.phase('drain').add('API listener', () => listener.close(config.shutdown_grace_seconds * 1000));
  return { authenticator, listener };
}
