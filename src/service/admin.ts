// The admin port: /livez (liveness checks), /readyz (readiness and what each part reports) and
// /metrics. It closes in the last phase of the stop, so that /readyz answers 503 and /metrics stays
// scrapable through the whole shutdown.
import { createAdminApp, type LivenessCheck } from '../admin/admin-app.js';
import { registerAggregateMetrics } from '../admin/aggregate-metrics.js';
import { EVENT_LOOP_WINDOW_MS, eventLoopCheck, indexWriterCheck, informersCheck, samplerCheck } from '../admin/liveness-checks.js';
import type { ReadinessTracker } from '../admin/readiness.js';
import type { StatusReportingAuthenticator } from '../auth/authenticator.js';
import type { BudgetSource, WorkloadIndex } from '../query/ports.js';
import { EventLoopLag } from '../runtime/event-loop-lag.js';
import { listen, type Listener } from '../runtime/http-listener.js';
import type { RetentionJob } from '../store/retention/retention-job.js';
import type { CapacityRuntime } from './capacity.js';
import type { WatchedClusters } from './clusters-and-writers.js';
import type { ServiceContext } from './service-context.js';
import type { TelemetryRuntime } from './telemetry.js';

// Only probes and scrapes use the admin port, and both are short.
const ADMIN_CLOSE_GRACE_MS = 1000;

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
  deps: { index: WorkloadIndex; budgets: BudgetSource; readiness: ReadinessTracker },
): void {
  const { metrics, clock, logger } = context;
  const { index, budgets, readiness } = deps;
  const ready = () => readiness.isReady();
  registerAggregateMetrics(metrics.registry, { index, budgets, ready, clock, logger: logger.child({ component: 'metrics' }) });
  metrics.gaugeFrom(
    'gpucap_ready',
    '1 while the service is ready (/readyz answers 200): the index synced and no required condition failing',
    () => (ready() ? 1 : 0),
  );
}

/** Binds the admin port, the last part started. */
export async function startAdmin(
  context: ServiceContext,
  deps: { sources: AdminSources; liveness: LivenessOptions | undefined },
): Promise<Listener> {
  const { config, metrics, parts } = context;
  const admin = createAdminApp({
    readiness: deps.sources.readiness,
    registry: metrics.registry,
    liveness: livenessChecks(context, deps),
    components: () => components(deps.sources),
  });
  const listener = await listen(admin.callback(), config.admin_listen);
  // In the close phase, just before the event loop monitor and the index.
  parts.phase('close').add('admin listener', () => listener.close(ADMIN_CLOSE_GRACE_MS));
  return listener;
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

/** What /readyz reports of each part beside the conditions. */
function components(sources: AdminSources): Record<string, unknown> {
  const { watched, capacity, telemetry } = sources;
  return {
    auth: sources.authenticator.status(),
    retention: sources.retention.status(),
    clusters: watched.clusters.statuses(),
    writers: watched.writers.statuses(),
    remoteKubeconfigProblems: watched.remote?.problems() ?? [],
    capacity:
      capacity === undefined
        ? { enabled: false }
        : {
            enabled: true,
            synced: capacity.budgets.synced,
            organizations: capacity.budgets.budgets().map((b) => b.organizationId),
            problems: capacity.budgets.problems(),
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
