// The admin port: /livez (liveness checks), /readyz (readiness and what each part reports, by
// counts where a part would name a tenant) and /metrics (for whom the API server allows it, with
// admin_auth kubernetes). It closes in the last phase of the stop, so that /readyz answers 503 and
// /metrics stays scrapable through the whole shutdown.
import { createAdminApp, type LivenessCheck } from '../admin/admin-app.js';
import { registerAggregateMetrics } from '../admin/aggregate-metrics.js';
import { EVENT_LOOP_WINDOW_MS, eventLoopCheck, indexWriterCheck, informersCheck, samplerCheck } from '../admin/liveness-checks.js';
import { MetricsAccess, PROTECTED_PATH } from '../admin/metrics-access.js';
import type { ReadinessTracker } from '../admin/readiness.js';
import type { AuthenticatorStatus, StatusReportingAuthenticator } from '../auth/authenticator.js';
import { nonResourceAccessReview } from '../k8s/access-review.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import type { BudgetSource, PriceSource, WorkloadIndex } from '../query/ports.js';
import { EventLoopLag } from '../runtime/event-loop-lag.js';
import { listen, type Listener } from '../runtime/http-listener.js';
import type { RetentionJob } from '../store/retention/retention-job.js';
import type { CapacityRuntime } from './capacity.js';
import type { WatchedClusters } from './clusters-and-writers.js';
import { registerFleetMetrics, type FleetMetricSources } from '../admin/fleet-metrics.js';
import type { ServiceContext } from './service-context.js';
import type { TelemetryRuntime } from './telemetry.js';

// Only probes and scrapes use the admin port, and both are short.
const ADMIN_CLOSE_GRACE_MS = 1000;
/** Each of a token's two reviews; well inside Prometheus' default scrape timeout (10 s). */
const ACCESS_REVIEW_TIMEOUT_MS = 3000;

/**
 * The liveness checks' clock (default performance.now: monotonic, unlike the service's clock), and the
 * event loop's window and limit (liveness-checks.ts); tests move the clock and shorten the others.
 */
export interface LivenessOptions {
  now?: () => number;
  eventLoopWindowMs?: number;
  eventLoopLimitMs?: number;
}

/** What the admin port reports on. */
export interface AdminSources {
  readiness: ReadinessTracker;
  eventLoop: EventLoopLag;
  watched: WatchedClusters;
  capacity: CapacityRuntime | undefined;
  telemetry: TelemetryRuntime | undefined;
  retention: RetentionJob;
  authenticator: StatusReportingAuthenticator;
}

/** Measured from the index's opening, so that /livez sees a start that held the loop; stops after the admin port. */
export function startEventLoopMonitor(context: ServiceContext, liveness: LivenessOptions | undefined): EventLoopLag {
  const eventLoop = new EventLoopLag({ windowMs: liveness?.eventLoopWindowMs ?? EVENT_LOOP_WINDOW_MS });
  context.parts.phase('close').add('event loop monitor', () => eventLoop.stop());
  eventLoop.start();
  return eventLoop;
}

/** The metrics about the index as a whole, and whether the service is ready. */
export function registerServiceGauges(
  context: ServiceContext,
  deps: { index: WorkloadIndex; budgets: BudgetSource; prices?: PriceSource; readiness: ReadinessTracker; fleet: FleetMetricSources },
): void {
  const { metrics, clock, logger } = context;
  const { index, budgets, prices, readiness } = deps;
  registerFleetMetrics(metrics.registry, deps.fleet);
  const ready = () => readiness.isReady();
  registerAggregateMetrics(metrics.registry, { index, budgets, prices, ready, clock, logger: logger.child({ component: 'metrics' }) });
  metrics.gaugeFrom(
    'gpucap_ready',
    '1 while the service is ready (/readyz answers 200): the index synced and no required condition failing',
    () => (ready() ? 1 : 0),
  );
}

/**
 * Binds the admin port, the last part started. `home` is the API server that reviews /metrics'
 * tokens (the cluster the service runs in); start-service.ts loads it whenever admin_auth is kubernetes.
 */
export async function startAdmin(
  context: ServiceContext,
  deps: { sources: AdminSources; liveness: LivenessOptions | undefined; home: LoadedKubeconfig | undefined },
): Promise<Listener> {
  const { config, metrics, parts } = context;
  const access = metricsAccess(context, deps.home);
  const admin = createAdminApp({
    readiness: deps.sources.readiness,
    registry: metrics.registry,
    liveness: livenessChecks(context, deps),
    components: () => ({ ...components(deps.sources), adminAuth: access?.status() ?? { mode: 'none' } }),
    metricsAccess: access,
  });
  const listener = await listen(admin.callback(), config.admin_listen);
  // In the close phase, just before the event loop monitor and the index.
  parts.phase('close').add('admin listener', () => listener.close(ADMIN_CLOSE_GRACE_MS));
  if (access === undefined) warnOpenMetrics(context, listener.address);
  return listener;
}

function metricsAccess(context: ServiceContext, home: LoadedKubeconfig | undefined): MetricsAccess | undefined {
  const { config, metrics, logger } = context;
  if (config.admin_auth === 'none') return undefined;
  if (home === undefined) {
    throw new Error('admin_auth kubernetes needs the kubeconfig of the cluster the service runs in, and none was loaded');
  }
  return new MetricsAccess({
    review: nonResourceAccessReview(home.kubeConfig, { verb: 'get', path: PROTECTED_PATH, timeoutMs: ACCESS_REVIEW_TIMEOUT_MS }),
    cacheSeconds: config.admin_auth_cache_seconds,
    registry: metrics.registry,
    logger: logger.child({ component: 'admin-auth' }),
  });
}

/**
 * admin_auth none: said at every start. Bound to loopback only (a laptop, the demo), it is said at
 * info: whoever can reach it is already on the machine.
 */
function warnOpenMetrics(context: ServiceContext, address: string): void {
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  const loopbackOnly = /^127\./.test(host) || host === '::1';
  const message = `admin_auth is none: anyone who reaches the admin port (${address}) reads ${PROTECTED_PATH}, ` +
    'every organization\'s and team\'s usage and every budget\'s hours; ' +
    'set GPUCAP_ADMIN_AUTH=kubernetes to require an authorized bearer token';
  if (loopbackOnly) context.logger.info({ admin: address }, message);
  else context.logger.warn({ admin: address }, message);
}

function livenessChecks(context: ServiceContext, deps: { sources: AdminSources; liveness: LivenessOptions | undefined }): LivenessCheck[] {
  const { config } = context;
  const { eventLoop, telemetry, watched, capacity } = deps.sources;
  const now = deps.liveness?.now ?? (() => performance.now());
  return [
    eventLoopCheck(eventLoop, deps.liveness?.eventLoopLimitMs),
    ...(telemetry === undefined ? [] : [samplerCheck(telemetry.sampler, { intervalMs: config.scrape_interval_seconds * 1000, now })]),
    indexWriterCheck(() => watched.indexers.writerProgress(), { flushIntervalMs: config.index_flush_interval_ms, now }),
    informersCheck(() => {
      const dead = watched.clusters
        .deadLoops()
        .map((loop) => ({ where: `cluster ${loop.clusterId}, ${loop.loop}`, message: loop.message }));
      const capacityEnded = capacity?.watch.status().loopEnded;
      return capacityEnded === undefined ? dead : [...dead, { where: 'capacity ConfigMaps', message: capacityEnded.message }];
    }),
  ];
}

/**
 * What /readyz reports of each part beside the conditions. /readyz is open, so it names no
 * organization, team or budget: those are counted. Cluster ids, files and condition names are the
 * operator's infrastructure and stay.
 */
function components(sources: AdminSources): Record<string, unknown> {
  const { watched, capacity, telemetry } = sources;
  return {
    auth: withoutRecordNames(sources.authenticator.status()),
    retention: sources.retention.status(),
    clusters: watched.clusters.statuses().map(({ organizationId: _tenant, ...cluster }) => cluster),
    writers: watched.writers.statuses(),
    remoteKubeconfigProblems: watched.remote?.problems() ?? [],
    capacity:
      capacity === undefined
        ? { enabled: false }
        : {
            enabled: true,
            synced: capacity.budgets.synced,
            // Which ConfigMaps and why: the log, and gpucap_capacity_configmap_rejected on /metrics.
            organizations: capacity.budgets.budgets().length,
            problems: capacity.budgets.problems().length,
          },
    telemetry:
      telemetry === undefined
        ? { enabled: false }
        : {
            enabled: true,
            ...telemetry.telemetry.stats(),
            lastTick: telemetry.sampler.lastTick(),
            exporters: telemetry.sampler.statuses(),
          },
  };
}

/** The API tokens file's load error quotes record ids, which often name a team: only whether it failed. */
function withoutRecordNames(status: AuthenticatorStatus): Record<string, unknown> {
  if (status.apiTokens === null) return { ...status };
  const { lastLoadError, ...apiTokens } = status.apiTokens;
  return { ...status, apiTokens: { ...apiTokens, lastLoadFailed: lastLoadError !== null } };
}
