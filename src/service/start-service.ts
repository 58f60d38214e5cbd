// The composition of the service. Each part is built once what it depends on is: config → logger →
// metrics → index → telemetry → clusters → capacity → readiness → API → admin port, each from its
// module beside this one, and registers its undo in the phase of the stop it belongs to
// (runtime/disposables.ts). Everything else takes its collaborators as arguments. src/main.ts runs it
// as the process.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { createServiceMetrics, type ServiceMetrics } from '../admin/metrics-registry.js';
import { ReadinessTracker } from '../admin/readiness.js';
import { describeDatabase, type Config } from '../config/schema.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { ClusterManager } from '../k8s/cluster-manager.js';
import { homeKubeconfig, KubeconfigError, type LoadedKubeconfig } from '../k8s/kubeconfig.js';
import { noBudgets, noTelemetry } from '../query/empty-sources.js';
import type { WorkloadIndex } from '../query/ports.js';
import { Disposables } from '../runtime/disposables.js';
import { StdoutLogDestination } from '../runtime/log-destination.js';
import { createLogger } from '../runtime/logger.js';
import { realDelay, type Delay } from '../runtime/periodic.js';
import { serviceVersion } from '../runtime/version.js';
import type { IndexBackend } from '../store/index-backend.js';
import type { SeedWriter } from '../store/ports.js';
import type { GpuTelemetry } from '../telemetry/gpu-telemetry.js';
import { registerServiceGauges, startAdmin, startEventLoopMonitor, type LivenessOptions } from './admin.js';
import { startApi } from './api.js';
import { capacityBudgets, startCapacity } from './capacity.js';
import { startPrices } from './prices.js';
import {
  addClusters, createFleetInventory, createIndexWriters, followWriters, watchClusters, type InformerOptions,
} from './clusters-and-writers.js';
import { openIndex, startRetention } from './index-backend.js';
import { startReadiness } from './readiness.js';
import type { ServiceContext } from './service-context.js';
import { shutdownOnce } from './shutdown.js';
import { startTelemetry, telemetryStore } from './telemetry.js';

export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
  /** Shorter reflector timeouts and backoff for tests against a simulated API. */
  informers?: InformerOptions;
  /** Where each part registers its undo (default: a new list); tests pass one that fails a chosen step. */
  parts?: Disposables;
  /** How every loop waits (default realDelay); tests hold one loop's waits to stall it. */
  delay?: Delay;
  /**
   * The liveness checks' clock (default performance.now: monotonic, unlike `clock`), and the event
   * loop's window and limit (liveness-checks.ts); tests move the clock and shorten the others.
   */
  liveness?: LivenessOptions;
}

export interface RunningService {
  apiAddress: string;
  adminAddress: string;
  /** Writes outside the clusters' election: tests and benchmarks seed the index with them. */
  store: SeedWriter;
  /** The read side the API uses: on SQLite's read pool (or its connection, with read_workers 0), or PostgreSQL's. */
  index: WorkloadIndex;
  /** SQLite's read workers behind `index`; null without them. */
  readPool: IndexBackend['readPool'];
  readiness: ReadinessTracker;
  metrics: ServiceMetrics;
  clusters: ClusterManager;
  /** The telemetry state (absent with telemetry_enabled false); benchmarks load it directly. */
  telemetry: GpuTelemetry | undefined;
  /**
   * Waits the shutdown delay, then undoes every part, phase by phase: drain requests (up to
   * shutdown_grace_seconds), stop the sources (informers, watches, sampler, loops; each cluster's
   * queued rows are written as it detaches), flush the lifetime totals or telemetry summaries, close
   * the admin port and the index. A step that fails is logged and the others still run; stop() then
   * rejects with an AggregateError of the failures. Safe to call twice.
   */
  stop(): Promise<void>;
}

/**
 * Starts every part, registering how to undo each as it starts (Disposables): when a step fails,
 * what was started is undone, phase by phase as in a stop, and the step's error is thrown. Parts
 * start in the order they depend on each other; see RunningService.stop for the order they stop in.
 */
export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  const clock = options.clock ?? systemClock;
  const version = serviceVersion();
  const logDestination = options.logger === undefined ? new StdoutLogDestination() : undefined;
  const logger = options.logger ?? createLogger({ level: config.log_level, version }, logDestination);
  // Before anything is opened: a bad kubeconfig fails the start with nothing to clean up.
  const home = loadHome(config);
  const parts = options.parts ?? new Disposables(logger);
  let running: RunningService;
  try {
    running = await startParts(config, { clock, version, logger, home, parts, options });
  } catch (error) {
    logger.error({ err: error }, 'Start failed: stopping what was started');
    // Each failed step is logged by Disposables; the start's own error is the one to report.
    await parts.disposeAll().catch(() => undefined);
    await logDestination?.end();
    throw error;
  }
  if (logDestination === undefined) return running;
  // The process exits once stopped: every line logged before goes out first, in order.
  return { ...running, stop: () => running.stop().finally(() => logDestination.end()) };
}

/**
 * The cluster the service runs in, when a part needs its API: the home cluster's workloads, the
 * capacity ConfigMaps (even when its workloads are not watched), and the reviews of /metrics' tokens.
 */
function loadHome(config: Config): LoadedKubeconfig | undefined {
  const needsHome = config.home_cluster_enabled || config.capacity_configmaps_enabled || config.admin_auth === 'kubernetes';
  if (!needsHome) return undefined;
  try {
    return homeKubeconfig({ file: config.kubeconfig, readFile: (path) => readFileSync(path, 'utf8') });
  } catch (error) {
    if (!(error instanceof KubeconfigError) || config.admin_auth !== 'kubernetes') throw error;
    throw new KubeconfigError(`${error.message}. GPUCAP_ADMIN_AUTH=kubernetes (the default) needs it too: the same API ` +
      'server reviews the bearer tokens of /metrics (GPUCAP_ADMIN_AUTH=none serves /metrics to anyone who reaches the admin port)');
  }
}

async function startParts(
  config: Config,
  context: {
    clock: Clock;
    version: string;
    logger: Logger;
    home: LoadedKubeconfig | undefined;
    parts: Disposables;
    options: ServiceOptions;
  },
): Promise<RunningService> {
  const { clock, version, logger, home, parts, options } = context;
  const metrics = createServiceMetrics(version);
  const service: ServiceContext = { config, clock, delay: options.delay ?? realDelay, logger, metrics, parts };
  // prom-client's GC observer is never disconnected and reaches the registry, whose collect
  // callbacks reach everything else: clearing it lets a stopped service (rings included) be freed.
  parts.phase('close').add('metrics registry', () => metrics.registry.clear());
  const readiness = new ReadinessTracker(logger);
  // Held until every other condition is declared below: without it the tracker saw all of the few
  // conditions declared so far met and logged "service ready" before a cluster was even added.
  readiness.require('startup');
  readiness.require('index');

  const { backend, location, instanceId } = await openIndex(service);
  const eventLoop = startEventLoopMonitor(service, options.liveness);
  // Both in the flush phase, newest first: retention's last pass halts before the lifetime totals
  // (SQLite) are written, and the telemetry summaries (PostgreSQL, started below) are written before it.
  const fleet = createFleetInventory(service);
  const onIdleMinute = (minute: { workloadId: string; end: number; idleSeconds: number }) => fleet.idle(minute);
  const store = telemetryStore(service, backend.telemetry, onIdleMinute);
  const retention = startRetention(service, backend);
  readiness.markReady('index');

  const budgets = capacityBudgets(service, home);
  const indexWriters = createIndexWriters(service, { backend, instanceId, budgets, fleet });
  const telemetry = config.telemetry_enabled
    ? startTelemetry(service, { store, writers: indexWriters.writers, onIdleMinute })
    : undefined;
  // Never holds back readiness; marks the service degraded while no exporter answers. Declared only
  // when telemetry runs, so /v1/health shows no `exporters` check for a feed that is turned off.
  if (telemetry !== undefined) readiness.markReady('telemetry');
  const fleetNodes = { nodes: () => indexWriters.fleet.allNodes() };

  const clusters = watchClusters(service, { writers: indexWriters, telemetry: telemetry?.telemetry, informers: options.informers });
  // Started after the cluster manager so that it stops before the clusters: no budget change remaps
  // workloads of a cluster that is being let go. Still started before any cluster is added.
  const capacity =
    budgets === undefined || home === undefined ? undefined : startCapacity(service, { budgets, home, tuning: options.informers?.tuning });
  capacity?.budgets.onChange((namespaces) => indexWriters.indexers.remapNamespaces(namespaces));
  const prices = startPrices(service, { home, budgets, tuning: options.informers?.tuning });
  registerServiceGauges(service, {
    index: backend.index, budgets: budgets ?? noBudgets, prices: prices?.pricing, readiness, fleet: fleetNodes,
  });
  const watched = await addClusters(service, { clusters, writers: indexWriters, home });
  startReadiness(service, { readiness, watched, capacity, prices, telemetry });
  followWriters(service, watched);

  const api = await startApi(service, {
    index: backend.index,
    telemetry: telemetry?.reader ?? noTelemetry,
    budgets: budgets ?? noBudgets,
    prices: prices?.pricing,
    fleet: indexWriters.fleet,
    readiness,
    version,
  });
  const admin = await startAdmin(service, {
    sources: { readiness, eventLoop, watched, capacity, telemetry, retention, authenticator: api.authenticator },
    liveness: options.liveness,
    home,
  });
  logger.info(
    { api: api.listener.address, admin: admin.address, db: describeDatabase(location), backend: backend.kind, instance: instanceId },
    'listening',
  );
  return {
    apiAddress: api.listener.address,
    adminAddress: admin.address,
    store: backend.seed,
    index: backend.index,
    readPool: backend.readPool,
    readiness,
    metrics,
    clusters,
    telemetry: telemetry?.telemetry,
    stop: shutdownOnce(config, { readiness, parts, logger }),
  };
}
