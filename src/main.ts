// Composition root: config → logger → metrics → index → sources → servers. Everything else takes
// its collaborators as arguments. Run directly, it is the process: signals drain and close cleanly.
import { readFileSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { createAdminApp } from './admin/admin-app.js';
import { EVENT_LOOP_WINDOW_MS, eventLoopCheck, indexWriterCheck, informersCheck, samplerCheck } from './admin/liveness-checks.js';
import { ClusterReadiness } from './admin/cluster-readiness.js';
import { registerInformerMetrics } from './admin/informer-metrics.js';
import { createServiceMetrics, type ServiceMetrics } from './admin/metrics-registry.js';
import { registerTelemetryMetrics } from './admin/telemetry-metrics.js';
import { registerTelemetrySummaryMetrics } from './admin/telemetry-summary-metrics.js';
import { registerWriterMetrics } from './admin/writer-metrics.js';
import { ReadinessTracker } from './admin/readiness.js';
import { createApiApp } from './api/app.js';
import { ConsoleAssetsMissingError, loadConsoleAssets, type ConsoleAssets } from './api/console/console-assets.js';
import { RateLimiter } from './api/rate-limiter.js';
import { createAuthenticator } from './auth/authenticator.js';
import { ConfigError, loadConfig } from './config/load.js';
import { databaseLocation, describeDatabase, instanceIdOf, scrapeTimeoutSeconds, type Config } from './config/schema.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { GpuSummaryStore } from './domain/telemetry.js';
import { ClusterWriters } from './ha/cluster-writers.js';
import type { ReflectorTuning } from './k8s/cluster-informers.js';
import { ClusterManager, type AttachedCluster } from './k8s/cluster-manager.js';
import { DecodeThread } from './k8s/decode/decode-thread.js';
import { INLINE_DECODER } from './k8s/decode/inline-decoder.js';
import { availableCpus } from './runtime/cpu-budget.js';
import { homeKubeconfig, type LoadedKubeconfig } from './k8s/kubeconfig.js';
import { RemoteClusters } from './k8s/remote-clusters.js';
import { ConfigMapBudgets, type ConfigMap } from './capacity/configmap-budgets.js';
import { registerCapacityMetrics } from './admin/capacity-metrics.js';
import { registerAggregateMetrics } from './admin/aggregate-metrics.js';
import { ConfigMapWatch } from './k8s/configmap-watch.js';
import { noBudgets, noTelemetry } from './query/empty-sources.js';
import type { BudgetSource, TelemetryReader, WorkloadIndex } from './query/ports.js';
import type { WholeEvent } from './k8s/objects/resource-event.js';
import { Disposables } from './runtime/disposables.js';
import { listen, type Listener } from './runtime/http-listener.js';
import { realDelay, runPeriodically, type Delay } from './runtime/periodic.js';
import { EventLoopLag } from './runtime/event-loop-lag.js';
import { StdoutLogDestination } from './runtime/log-destination.js';
import { createLogger } from './runtime/logger.js';
import { defaultConsoleAssetsDir } from './runtime/package-root.js';
import { serviceVersion } from './runtime/version.js';
import { openBackend, type SeedWriter } from './store/backend.js';
import { RetentionJob } from './store/retention.js';
import { rawSlotsFor } from './telemetry/rings/gpu-rings.js';
import { GpuTelemetry, type GpuTelemetryOptions } from './telemetry/gpu-telemetry.js';
import { createHttpScrape } from './telemetry/scrape/http-scrape.js';
import { BucketAccumulator } from './telemetry/sinks/bucket-accumulator.js';
import { LifetimeAccumulators } from './telemetry/sinks/lifetime.js';
import { SharedTelemetryReader } from './telemetry/summaries/shared-telemetry.js';
import { SummaryFlusher } from './telemetry/sinks/summary-flusher.js';
import { Sampler, type ExporterStatus } from './telemetry/scrape/sampler.js';
import { ClusterIndexers } from './workloads/indexing/cluster-indexers.js';
import type { LabelKeys } from './workloads/attribution/label-keys.js';
import { readFields } from './workloads/read-fields.js';

const RETENTION_INTERVAL_MS = 3_600_000;
// Readiness follows the informers within this; cheap (a walk over a few status objects).
const READINESS_REFRESH_MS = 250;
// A finished workload's lifetime totals leave memory this long after its last sample (read back from SQLite).
const LIFETIME_IDLE_MS = 15 * 60_000;
// Only probes and scrapes use the admin port, and both are short.
const ADMIN_CLOSE_GRACE_MS = 1000;
// Items per write step when writes run on the write worker: the event loop is free during a step, so
// steps are sized for the commits alone. At 150k pods over 4 clusters, 2,000 against 500 took the sync
// from 34 to 29 s and the 10,000 events/s step from 6,575 to 7,062 events/s absorbed.
const WORKER_STEP_ITEMS = 2000;
/**
 * CPUs from which watch streams are parsed on a worker when decode_worker is unset. On 2 cores the
 * worker's CPU came out of the write worker's, and the sync and the lag at 5,000 events/s missed
 * their targets (docs/performance.md); with a core to spare beyond the main thread, the write worker
 * and the read workers, the parse leaves the thread that answers requests.
 */
const DECODE_WORKER_MIN_CPUS = 4;

export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
  /** Shorter reflector timeouts and backoff for tests against a simulated API. */
  informers?: { tuning?: ReflectorTuning; dependencyWaitMs?: number };
  /** Where each part registers its undo (default: a new list); tests pass one that fails a chosen step. */
  parts?: Disposables;
  /** How every loop waits (default realDelay); tests hold one loop's waits to stall it. */
  delay?: Delay;
  /**
   * The liveness checks' clock (default performance.now: monotonic, unlike `clock`), and the event
   * loop's window and limit (liveness-checks.ts); tests move the clock and shorten the others.
   */
  liveness?: { now?: () => number; eventLoopWindowMs?: number; eventLoopLimitMs?: number };
}

function labelKeys(config: Config): LabelKeys {
  return {
    initiative: config.label_initiative,
    organization: config.label_organization,
    submittedBy: config.label_submitted_by,
    managed: config.label_managed,
    kueueQueueName: config.label_kueue_queue_name,
    instanceType: config.label_instance_type,
    gpuProduct: config.label_gpu_product,
  };
}

interface TelemetryRuntime {
  reader: TelemetryReader;
  telemetry: GpuTelemetry;
  sampler: Sampler;
}

/**
 * Where samples go: this process's rings and lifetime totals (SQLite), or summaries every replica
 * shares through PostgreSQL, gathered by the writer of each cluster (docs/scaling.md).
 */
type TelemetryStore = { kind: 'local'; lifetimes: LifetimeAccumulators } | { kind: 'shared'; summaries: GpuSummaryStore; writes: (clusterId: string) => boolean; writing: () => string[] };

interface TelemetryDeps {
  store: TelemetryStore;
  metrics: ServiceMetrics;
  clock: Clock;
  delay: Delay;
  logger: Logger;
  parts: Disposables;
}

/**
 * Exporter discovery (through the pod informers), the sampler and where its samples go. Local
 * lifetime totals' last write is registered by the caller, before these loops, so that it runs after
 * both stopped; shared summaries' last write is registered here, before the sampler, for the same reason.
 */
function startTelemetry(config: Config, deps: TelemetryDeps): TelemetryRuntime {
  const { store, metrics, clock, delay, logger, parts } = deps;
  const { route, reader } = store.kind === 'local' ? { route: { samples: { lifetime: store.lifetimes } }, reader: undefined } : shareTelemetry(config, store, deps);
  const telemetry = new GpuTelemetry({
    discovery: { selectors: config.exporter_selectors, port: config.exporter_port, path: config.exporter_path },
    gpuResources: config.gpu_resources,
    rawSlots: rawSlotsFor(config.scrape_interval_seconds),
    ...route,
  });
  if (store.kind === 'local') {
    const flusher = runPeriodically(config.lifetime_flush_seconds * 1000, () => void store.lifetimes.flush(), {
      delay,
      onError: (error) => logger.error({ err: error }, 'Lifetime totals flush failed'),
    });
    parts.add('lifetime flush loop', () => flusher.stop());
  }
  const sampler: Sampler = new Sampler({
    intervalMs: config.scrape_interval_seconds * 1000,
    concurrency: config.scrape_concurrency,
    clock,
    delay,
    scrape: createHttpScrape({ timeoutMs: scrapeTimeoutSeconds(config) * 1000, maxBytes: config.scrape_max_bytes }),
    targets: () => telemetry.targets(),
    ingest: (target, text, at) => telemetry.ingest(target, text, at),
    observer: registerTelemetryMetrics(metrics.registry, {
      stats: () => telemetry.stats(),
      exporters: (): ExporterStatus[] => sampler.statuses(),
      lastTick: () => sampler.lastTick(),
    }),
    logger: logger.child({ component: 'sampler' }),
    beforeTick: (targets) => telemetry.beforeTick(targets),
    afterTick: (at) => telemetry.prune(at),
  });
  parts.add('sampler', () => sampler.stop());
  sampler.start();
  return { reader: reader ?? telemetry, telemetry, sampler };
}

/** The writer's buckets, their flush loop and last write, and the reader every replica answers from. */
function shareTelemetry(
  config: Config,
  store: Extract<TelemetryStore, { kind: 'shared' }>,
  deps: TelemetryDeps,
): { route: Pick<GpuTelemetryOptions, 'samples' | 'scrapes'>; reader: TelemetryReader } {
  const { clock, delay, logger, parts } = deps;
  const widthMs = config.telemetry_summary_seconds * 1000;
  const buckets = new BucketAccumulator({ widthMs, intervalSeconds: config.scrape_interval_seconds, idleThresholdPercent: config.idle_threshold_percent });
  const flusher = new SummaryFlusher(store.summaries, buckets, {
    // A tick's samples carry its start time and arrive up to the scrape timeout later.
    graceMs: scrapeTimeoutSeconds(config) * 1000 + 1000,
    clock,
    clusters: store.writing,
    logger: logger.child({ component: 'telemetry-summaries' }),
  });
  parts.add('telemetry summaries', async () => void (await flusher.flush({ all: true })));
  registerTelemetrySummaryMetrics(deps.metrics.registry, { stats: () => flusher.stats() });
  const loop = runPeriodically(Math.min(widthMs, 5000), async () => void (await flusher.flush()), {
    delay,
    onError: (error) => logger.warn({ err: error, ...flusher.stats() }, 'GPU telemetry summaries could not be written; kept for the next try'),
  });
  parts.add('telemetry summaries loop', () => loop.stop());
  return { route: { samples: { buckets }, scrapes: store.writes }, reader: new SharedTelemetryReader(store.summaries, { widthMs }) };
}

interface CapacityRuntime {
  budgets: ConfigMapBudgets;
  watch: ConfigMapWatch;
  startedAt: number;
}

/** Budgets from the capacity ConfigMaps of the service's namespace, watched live on the home cluster's API. */
function startCapacity(
  config: Config,
  budgets: ConfigMapBudgets,
  deps: { kubeConfig: LoadedKubeconfig['kubeConfig']; metrics: ServiceMetrics; clock: Clock; delay: Delay; logger: Logger; tuning?: ReflectorTuning; parts: Disposables },
): CapacityRuntime {
  const watch = new ConfigMapWatch(deps.kubeConfig, {
    namespace: config.namespace,
    labelSelector: config.capacity_label_selector,
    clock: deps.clock,
    delay: deps.delay,
    logger: deps.logger,
    tuning: deps.tuning,
    // The ConfigMap watch takes its LIST whole (no pages): a handful of small objects.
    onEvent: (event) => {
      if (event.type !== 'PAGE') budgets.onEvent(event as WholeEvent<ConfigMap>);
    },
  });
  registerCapacityMetrics(deps.metrics.registry, { problems: () => budgets.problems(), budgets: () => budgets.budgets().length, synced: () => budgets.synced });
  deps.parts.add('capacity watch', () => watch.stop());
  watch.start();
  return { budgets, watch, startedAt: deps.clock.now() };
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

/** Ready once the ConfigMaps were listed (or their API stayed unreachable too long); degraded while one is rejected. */
function refreshCapacityReadiness(capacity: CapacityRuntime, readiness: ReadinessTracker, options: { now: number; unreachableAfterMs: number }): void {
  const status = capacity.watch.status();
  if (capacity.budgets.synced) readiness.markReady('capacity');
  else if (status.failing && options.now - capacity.startedAt >= options.unreachableAfterMs) readiness.waive('capacity');
  const problems = capacity.budgets.problems();
  const failure = status.failing
    ? `capacity ConfigMaps cannot be read: ${status.lastError?.message ?? 'failing'}`
    : problems.length > 0
      ? `${problems.length} capacity ConfigMap(s) rejected`
      : null;
  readiness.setFailure('capacity', failure);
}

export interface RunningService {
  apiAddress: string;
  adminAddress: string;
  /** Writes outside the clusters' election: tests and benchmarks seed the index with them. */
  store: SeedWriter;
  /** The read side the API uses: SQLite's read pool (or its store, with read_workers 0), or PostgreSQL's. */
  index: WorkloadIndex;
  readiness: ReadinessTracker;
  metrics: ServiceMetrics;
  clusters: ClusterManager;
  /** The telemetry state (absent with telemetry_enabled false); benchmarks load it directly. */
  telemetry: GpuTelemetry | undefined;
  /**
   * Waits the shutdown delay, then undoes every part, newest first: drain requests (up to
   * shutdown_grace_seconds), stop the loops, write the clusters' queued rows and the lifetime totals,
   * close the index. A step that fails is logged and the others still run; stop() then rejects with
   * an AggregateError of the failures. Safe to call twice.
   */
  stop(): Promise<void>;
}

/**
 * Starts every part, registering how to undo each as it starts (Disposables): when a step fails,
 * what was started is undone, newest first, and the step's error is thrown. The order of the parts
 * is the reverse of the order they stop in; see RunningService.stop.
 */
export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  const clock = options.clock ?? systemClock;
  const version = serviceVersion();
  const logDestination = options.logger === undefined ? new StdoutLogDestination() : undefined;
  const logger = options.logger ?? createLogger({ level: config.log_level, version }, logDestination);
  // Before anything is opened: a bad kubeconfig fails the start with nothing to clean up.
  // The home cluster's API also serves the capacity ConfigMaps, even when its workloads are not watched.
  const needsHome = config.home_cluster_enabled || config.capacity_configmaps_enabled;
  const home = needsHome ? homeKubeconfig({ file: config.kubeconfig, readFile: (path) => readFileSync(path, 'utf8') }) : undefined;
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

async function startParts(
  config: Config,
  context: { clock: Clock; version: string; logger: Logger; home: LoadedKubeconfig | undefined; parts: Disposables; options: ServiceOptions },
): Promise<RunningService> {
  const { clock, version, logger, home, parts, options } = context;
  const delay = options.delay ?? realDelay;
  const metrics = createServiceMetrics(version);
  // prom-client's GC observer is never disconnected and reaches the registry, whose collect
  // callbacks reach everything else: clearing it lets a stopped service (rings included) be freed.
  parts.add('metrics registry', () => metrics.registry.clear());
  const readiness = new ReadinessTracker(logger);
  // Held until every other condition is declared below: without it the tracker saw all of the few
  // conditions declared so far met and logged "service ready" before a cluster was even added.
  readiness.require('startup');
  readiness.require('index');

  const location = databaseLocation(config);
  const instanceId = instanceIdOf(config, process.env, hostname());
  const backend = await openBackend(location, {
    instanceId,
    clock,
    readWorkers: config.read_workers,
    writeWorker: config.write_worker,
    backgroundNiceness: config.background_niceness,
    poolSize: config.db_pool_size,
    preparedStatements: config.db_prepared_statements,
    leaseSeconds: config.ha_lease_seconds,
    logger,
    gauge: (name, help, read) => metrics.gaugeFrom(name, help, read),
  });
  parts.add('index', () => backend.close());
  // Measured from here, so that /livez sees a start that held the loop; stops after the admin port.
  const eventLoop = new EventLoopLag({ windowMs: options.liveness?.eventLoopWindowMs ?? EVENT_LOOP_WINDOW_MS });
  parts.add('event loop monitor', () => eventLoop.stop());
  eventLoop.start();
  // The admin server is bound at the end of the start, but closes here, just before the index: /readyz
  // answers 503 and /metrics stays scrapable through the whole shutdown.
  const adminSlot: { listener?: Listener } = {};
  parts.add('admin listener', () => adminSlot.listener?.close(ADMIN_CLOSE_GRACE_MS));
  const lifetimes = backend.telemetry.kind === 'shared' ? undefined : new LifetimeAccumulators(backend.telemetry.lifetimes, {
    clock, idleMs: LIFETIME_IDLE_MS, intervalSeconds: config.scrape_interval_seconds, idleThresholdPercent: config.idle_threshold_percent,
  });
  // Runs after the sampler and the lifetime flush loop (registered later) have stopped.
  if (lifetimes !== undefined) parts.add('lifetime totals', () => lifetimes.flush());
  const index: WorkloadIndex = backend.index;
  const retention = new RetentionJob(backend.purger, { retentionDays: config.retention_days, intervalMs: RETENTION_INTERVAL_MS, clock, logger: logger.child({ component: 'retention' }) });
  parts.add('retention', () => retention.stop());
  retention.start();
  readiness.markReady('index');

  // The election starts with the clusters, below; until then this replica writes none of them.
  const election: { writers?: ClusterWriters } = {};
  const writing = (): string[] => (election.writers?.statuses() ?? []).filter((s) => s.role === 'writer').map((s) => s.clusterId);
  const telemetryStore: TelemetryStore =
    lifetimes !== undefined
      ? { kind: 'local', lifetimes }
      : { kind: 'shared', summaries: (backend.telemetry as Extract<typeof backend.telemetry, { kind: 'shared' }>).summaries, writing, writes: (clusterId) => writing().includes(clusterId) };
  const telemetry = config.telemetry_enabled ? startTelemetry(config, { store: telemetryStore, metrics, clock, delay, logger, parts }) : undefined;
  // Never holds back readiness; marks the service degraded while no exporter answers. Declared only
  // when telemetry runs, so /v1/health shows no `exporters` check for a feed that is turned off.
  if (telemetry !== undefined) readiness.markReady('telemetry');

  const capacityLogger = logger.child({ component: 'capacity' });
  const capacityBudgets = home !== undefined && config.capacity_configmaps_enabled ? new ConfigMapBudgets({ key: config.capacity_configmap_key, logger: capacityLogger }) : undefined;
  const budgets: BudgetSource = capacityBudgets ?? noBudgets;
  registerAggregateMetrics(metrics.registry, { index, budgets, ready: () => readiness.isReady(), clock, logger: logger.child({ component: 'metrics' }) });
  metrics.gaugeFrom('gpucap_ready', '1 while the service is ready (/readyz answers 200): the index synced and no required condition failing', () => (readiness.isReady() ? 1 : 0));

  // Informers → indexers (and the telemetry's pod directory) → index. Each cluster adds its own readiness conditions as it starts.
  // An indexer writes its cluster only once this replica holds the cluster's write lock (src/ha/).
  const indexers = new ClusterIndexers(null, {
    defaultOrganizationId: config.default_organization_id,
    keys: labelKeys(config),
    gpuResources: config.gpu_resources,
    clock,
    logger: logger.child({ component: 'indexer' }),
    yieldToLoop: () => new Promise((resolve) => setImmediate(resolve)),
    backlogAfterMs: config.index_flush_interval_ms,
    ...(backend.writesOnWorker ? { stepItems: WORKER_STEP_ITEMS } : {}),
    ...(capacityBudgets === undefined ? {} : { namespaceInitiatives: capacityBudgets }),
  });
  const writers = new ClusterWriters(backend.leases, indexers, {
    instanceId,
    retryMs: config.ha_retry_seconds * 1000,
    clock,
    delay,
    logger: logger.child({ component: 'writers' }),
  });
  election.writers = writers;
  const informerLogger = logger.child({ component: 'informers' });
  const cpus = availableCpus();
  const decodeOnWorker = config.decode_worker ?? cpus >= DECODE_WORKER_MIN_CPUS;
  informerLogger.info({ decodeWorker: decodeOnWorker, cpus, setting: config.decode_worker ?? 'unset' }, decodeOnWorker ? 'Watch streams are parsed on a worker thread' : 'Watch streams are parsed on the main thread');
  const decoder = decodeOnWorker ? new DecodeThread({ logger: informerLogger, niceness: config.background_niceness }) : INLINE_DECODER;
  if (decoder instanceof DecodeThread) {
    // Registered before the clusters, so that it closes after every stream it decodes has stopped.
    parts.add('watch decoder', () => decoder.close());
    metrics.gaugeFrom('gpucap_watch_decode_backlog_chunks', 'Chunks of watch streams sent to the decode worker and not decoded yet', () => decoder.status().backlog);
    metrics.gaugeFrom('gpucap_watch_decoder_restarts', 'Decode workers that stopped while in use and were replaced, since the start', () => decoder.status().restarts);
  }
  const clusters = new ClusterManager({
    namespaces: config.watch_namespaces,
    clock,
    delay,
    logger: informerLogger,
    tuning: options.informers?.tuning,
    decoding: { decoder, fields: readFields(labelKeys(config)) },
    dependencyWaitMs: options.informers?.dependencyWaitMs,
    attach: (cluster) => {
      // Detached in this order: the indexer writes its last changes, then the write lock is released.
      const consumers: AttachedCluster[] = [
        indexers.attach(cluster),
        writers.attach(cluster),
        ...(telemetry === undefined ? [] : [telemetry.telemetry.attach(cluster)]),
      ];
      return {
        onEvent: (resource, event, namespace) => consumers.forEach((consumer) => consumer.onEvent(resource, event, namespace)),
        detach: async () => {
          for (const consumer of consumers) await consumer.detach();
        },
      };
    },
  });
  parts.add('clusters', () => clusters.stop()); // each cluster's queued rows are written as it detaches
  // Started after the cluster manager so that it stops before the clusters: no budget change remaps
  // workloads of a cluster that is being let go. Still started before any cluster is added.
  const capacity =
    home !== undefined && capacityBudgets !== undefined
      ? startCapacity(config, capacityBudgets, { kubeConfig: home.kubeConfig, metrics, clock, delay, logger: capacityLogger, tuning: options.informers?.tuning, parts })
      : undefined;
  capacity?.budgets.onChange((namespaces) => indexers.remapNamespaces(namespaces));
  const flusher = runPeriodically(config.index_flush_interval_ms, (signal) => indexers.flushAll(signal), {
    delay,
    onError: (error) => logger.error({ err: error }, 'Index flush failed'),
  });
  parts.add('index flush loop', () => flusher.stop());
  if (home !== undefined && config.home_cluster_enabled) {
    clusters.add({ id: config.cluster_id, kubeConfig: home.kubeConfig, origin: home.origin, organizationId: config.cluster_organization_id });
  }
  const remote =
    config.remote_kubeconfig_dir === undefined
      ? undefined
      : new RemoteClusters(clusters, {
          dir: config.remote_kubeconfig_dir,
          settings: config.remote_clusters,
          reservedIds: config.home_cluster_enabled ? [config.cluster_id] : [],
          intervalMs: config.remote_kubeconfig_reload_seconds * 1000,
          delay,
          logger: informerLogger,
        });
  if (remote !== undefined) {
    parts.add('remote kubeconfigs', () => remote.stop());
    await remote.start();
  }
  if (clusters.ids().length === 0 && remote === undefined) logger.warn('Watching no cluster: the index serves only what it already holds');
  const clusterReadiness = new ClusterReadiness(readiness, {
    clock,
    unreachableAfterMs: config.cluster_unreachable_after_seconds * 1000,
    indexed: (clusterId) => writers.indexed(clusterId),
  });
  if (capacity !== undefined) readiness.require('capacity');
  const refreshReadiness = () => {
    clusterReadiness.update(clusters.statuses(), remote?.problems() ?? []);
    if (capacity !== undefined) refreshCapacityReadiness(capacity, readiness, { now: clock.now(), unreachableAfterMs: config.cluster_unreachable_after_seconds * 1000 });
    if (telemetry !== undefined) readiness.setFailure('telemetry', telemetry.sampler.failingEverywhere() ? 'no dcgm-exporter answered the last scrape' : null);
  };
  refreshReadiness();
  readiness.markReady('startup');
  const readinessLoop = runPeriodically(READINESS_REFRESH_MS, refreshReadiness, {
    delay,
    onError: (error) => logger.error({ err: error }, 'Readiness refresh failed'),
  });
  parts.add('readiness loop', () => readinessLoop.stop());
  const holdersLoop = runPeriodically(config.ha_retry_seconds * 1000, () => writers.refreshHolders(), {
    delay,
    onError: (error) => logger.warn({ err: error }, 'Could not read the writers of the clusters'),
  });
  parts.add('writer holders loop', () => holdersLoop.stop());
  registerWriterMetrics(metrics.registry, () => writers.statuses());
  registerInformerMetrics(metrics.registry, { clusters: () => clusters.statuses(), problems: () => remote?.problems() ?? [], indexers: () => indexers.counters() });

  const authenticator = createAuthenticator(config, { clock, logger });
  parts.add('authenticator', () => authenticator.close());
  const api = createApiApp({
    deps: { index, telemetry: telemetry?.reader ?? noTelemetry, budgets, health: readiness, clock, version },
    readiness,
    authenticator,
    rateLimiter: new RateLimiter({ perSecond: config.rate_limit_per_second, burst: config.rate_limit_burst }, clock),
    corsAllowedOrigins: config.cors_allowed_origins,
    logger,
    observeRequest: metrics.observeRequest,
    ...(config.console_enabled ? { console: consoleAssets(config.console_assets_dir, logger) } : {}),
  });
  const livenessNow = options.liveness?.now ?? (() => performance.now());
  const admin = createAdminApp({
    readiness,
    registry: metrics.registry,
    liveness: [
      eventLoopCheck(eventLoop, options.liveness?.eventLoopLimitMs),
      ...(telemetry === undefined ? [] : [samplerCheck(telemetry.sampler, { intervalMs: config.scrape_interval_seconds * 1000, now: livenessNow })]),
      indexWriterCheck(() => indexers.writerProgress(), { flushIntervalMs: config.index_flush_interval_ms, now: livenessNow }),
      informersCheck(() => {
        const dead = clusters.deadLoops().map((loop) => ({ where: `cluster ${loop.clusterId}, ${loop.loop}`, message: loop.message }));
        const capacityEnded = capacity?.watch.status().loopEnded;
        return capacityEnded === undefined ? dead : [...dead, { where: 'capacity ConfigMaps', message: capacityEnded.message }];
      }),
    ],
    components: () => ({
      auth: authenticator.status(),
      retention: retention.status(),
      clusters: clusters.statuses(),
      writers: writers.statuses(),
      remoteKubeconfigProblems: remote?.problems() ?? [],
      capacity: capacity === undefined ? { enabled: false } : { enabled: true, synced: capacity.budgets.synced, organizations: capacity.budgets.budgets().map((b) => b.organizationId), problems: capacity.budgets.problems() },
      telemetry:
        telemetry === undefined
          ? { enabled: false }
          : { enabled: true, ...telemetry.telemetry.stats(), lastTick: telemetry.sampler.lastTick(), exporters: telemetry.sampler.statuses() },
    }),
  });
  const apiListener = await listen(api.callback(), config.listen);
  // The newest part: the first undone, so the shutdown drains requests before anything they read stops.
  parts.add('API listener', () => apiListener.close(config.shutdown_grace_seconds * 1000));
  const adminListener = await listen(admin.callback(), config.admin_listen);
  adminSlot.listener = adminListener;
  logger.info({ api: apiListener.address, admin: adminListener.address, db: describeDatabase(location), backend: backend.kind, instance: instanceId }, 'listening');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      readiness.beginShutdown();
      logger.info({ delaySeconds: config.shutdown_delay_seconds, graceSeconds: config.shutdown_grace_seconds }, 'shutting down');
      // Endpoint removal lags SIGTERM by seconds: keep answering what still arrives until it is done.
      await new Promise((resolve) => setTimeout(resolve, config.shutdown_delay_seconds * 1000));
      logger.info('draining requests');
      try {
        await parts.disposeAll();
      } catch (error) {
        logger.error({ err: error }, 'stopped, but not cleanly: see the failed steps above');
        throw error;
      }
      logger.info('stopped');
    })());
  return { apiAddress: apiListener.address, adminAddress: adminListener.address, store: backend.seed, index, readiness, metrics, clusters, telemetry: telemetry?.telemetry, stop };
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
  let service: RunningService;
  try {
    service = await startService(config);
  } catch (error) {
    // A kubeconfig that cannot be used is a configuration problem: same exit code as a bad setting.
    if ((error as { code?: unknown }).code === 'KUBECONFIG_INVALID') {
      console.error((error as Error).message);
      process.exit(2);
    }
    throw error;
  }
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
