// Composition root: config → logger → metrics → index → sources → servers. Everything else takes
// its collaborators as arguments. Run directly, it is the process: signals drain and close cleanly.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { createAdminApp } from './admin/admin-app.js';
import { createServiceMetrics, type ServiceMetrics } from './admin/metrics-registry.js';
import { ReadinessTracker } from './admin/readiness.js';
import { createApiApp } from './api/app.js';
import { RateLimiter } from './api/rate-limiter.js';
import { createAuthenticator } from './auth/authenticator.js';
import { ConfigError, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { systemClock, type Clock } from './domain/clock.js';
import { noBudgets, noTelemetry } from './query/empty-sources.js';
import { listen } from './runtime/http-listener.js';
import { createLogger } from './runtime/logger.js';
import { serviceVersion } from './runtime/version.js';
import { openDatabase } from './store/database.js';
import { RetentionJob } from './store/retention.js';
import { SqliteWorkloadStore } from './store/workload-store.js';

const RETENTION_INTERVAL_MS = 3_600_000;

export interface RunningService {
  apiAddress: string;
  adminAddress: string;
  store: SqliteWorkloadStore;
  readiness: ReadinessTracker;
  metrics: ServiceMetrics;
  /** Drain requests (up to shutdown_grace_seconds), stop loops, close the database. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startService(config: Config, options: { clock?: Clock; logger?: Logger } = {}): Promise<RunningService> {
  const clock = options.clock ?? systemClock;
  const version = serviceVersion();
  const logger = options.logger ?? createLogger({ level: config.log_level, version });
  const metrics = createServiceMetrics(version);
  const readiness = new ReadinessTracker(logger);
  readiness.require('index');

  const db = openDatabase(config.db_path);
  const store = new SqliteWorkloadStore(db, { clock });
  metrics.gaugeFrom('gpucap_index_workloads', 'Workload rows in the SQLite index', () => store.countRows());
  const retention = new RetentionJob(store, { retentionDays: config.retention_days, intervalMs: RETENTION_INTERVAL_MS, clock, logger: logger.child({ component: 'retention' }) });
  retention.start();
  // Until the informers exist (issue 3) the index is complete as soon as it is open.
  readiness.markReady('index');

  const authenticator = createAuthenticator(config, { clock, logger });
  const api = createApiApp({
    deps: { index: store, telemetry: noTelemetry, budgets: noBudgets, health: readiness, clock, version },
    readiness,
    authenticator,
    rateLimiter: new RateLimiter({ perSecond: config.rate_limit_per_second, burst: config.rate_limit_burst }, clock),
    corsAllowedOrigins: config.cors_allowed_origins,
    logger,
    observeRequest: metrics.observeRequest,
  });
  const admin = createAdminApp({ readiness, registry: metrics.registry, components: () => ({ auth: authenticator.status(), retention: retention.status() }) });
  const apiListener = await listen(api.callback(), config.listen);
  const adminListener = await listen(admin.callback(), config.admin_listen);
  logger.info({ api: apiListener.address, admin: adminListener.address, db: config.db_path }, 'listening');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      readiness.beginShutdown();
      logger.info({ delaySeconds: config.shutdown_delay_seconds, graceSeconds: config.shutdown_grace_seconds }, 'shutting down');
      // Endpoint removal lags SIGTERM by seconds: keep answering what still arrives until it is done.
      await new Promise((resolve) => setTimeout(resolve, config.shutdown_delay_seconds * 1000));
      logger.info('draining requests');
      await apiListener.close(config.shutdown_grace_seconds * 1000);
      retention.stop();
      authenticator.close();
      await adminListener.close(1000);
      db.close();
      logger.info('stopped');
    })());
  return { apiAddress: apiListener.address, adminAddress: adminListener.address, store, readiness, metrics, stop };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const service = await startService(config);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error('Shutdown failed', error);
          process.exit(1);
        },
      );
    });
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) {
  main().catch((error: unknown) => {
    console.error(`gpu-capacity-api failed to start: ${(error as Error).message}`);
    process.exit(1);
  });
}
