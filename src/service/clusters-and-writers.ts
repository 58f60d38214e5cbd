// The watched clusters and the writers of the index: informers → indexers (and the telemetry's pod
// directory) → index. An indexer writes its cluster only once this replica holds the cluster's write
// lock (src/ha/); each cluster's events reach its consumers through k8s/cluster-fan-out.ts.
import { DEFAULT_MIG_TOTAL_SLICES } from '../k8s/gpus/pod-share.js';
import type { GpuCounting } from '../workloads/mapping/pod-shares.js';
import { registerInformerMetrics } from '../admin/informer-metrics.js';
import { registerWriterMetrics } from '../admin/writer-metrics.js';
import type { ConfigMapBudgets } from '../capacity/configmap-budgets.js';
import type { Config } from '../config/schema.js';
import { FleetInventory } from '../fleet/fleet-inventory.js';
import { FleetLedgerWriters } from '../fleet/fleet-ledger-writer.js';
import { ClusterWriters } from '../ha/cluster-writers.js';
import type { WriterTargets } from '../ha/ports.js';
import type { ReflectorTuning } from '../k8s/cluster-informers.js';
import { fanOutClusters } from '../k8s/cluster-fan-out.js';
import { ClusterManager } from '../k8s/cluster-manager.js';
import { DecodeThread } from '../k8s/decode/decode-thread.js';
import { INLINE_DECODER } from '../k8s/decode/inline-decoder.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import { RemoteClusters } from '../k8s/remote-clusters.js';
import { availableCpus } from '../runtime/cpu-budget.js';
import { runPeriodically } from '../runtime/periodic.js';
import type { IndexBackend } from '../store/index-backend.js';
import type { GpuTelemetry } from '../telemetry/gpu-telemetry.js';
import { ClusterIndexers } from '../workloads/indexing/cluster-indexers.js';
import type { LabelKeys } from '../workloads/attribution/label-keys.js';
import { readFields } from '../workloads/read-fields.js';
import type { ServiceContext } from './service-context.js';

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

/** Reflector settings and the wait for dependent informers; tests shorten them against a simulated API. */
export interface InformerOptions {
  tuning?: ReflectorTuning;
  dependencyWaitMs?: number;
}

export interface IndexWriters {
  indexers: ClusterIndexers;
  writers: ClusterWriters;
  /** Every cluster's GPU nodes, live, fed beside the indexers. */
  fleet: FleetInventory;
  /** Writes the fleet's history of the clusters this replica writes. */
  ledger: FleetLedgerWriters;
}

/** Every cluster that is watched, and who writes it. */
export interface WatchedClusters extends IndexWriters {
  clusters: ClusterManager;
  remote: RemoteClusters | undefined;
}

function labelKeys(config: Config): LabelKeys {
  return {
    initiative: config.label_initiative,
    allowedInitiatives: config.label_allowed_initiatives,
    organization: config.label_organization,
    submittedBy: config.label_submitted_by,
    managed: config.label_managed,
    kueueQueueName: config.label_kueue_queue_name,
    instanceType: config.label_instance_type,
    gpuProduct: config.label_gpu_product,
    capacityType: config.label_capacity_type,
  };
}

/** How GPUs are counted, from the settings: an unknown MIG product is said once, with the setting that names it. */
function gpuCounting(config: ServiceContext['config'], logger: ServiceContext['logger']): GpuCounting {
  const warned = new Set<string>();
  return {
    basis: config.gpu_hours_basis,
    settings: {
      migTotals: config.mig_total_slices,
      onUnknownMigTotal: (product) => {
        if (warned.has(product)) return;
        warned.add(product);
        logger.warn({ component: 'indexer', product, assumed: DEFAULT_MIG_TOTAL_SLICES },
          `MIG slices of ${product} are not known: counted as ${DEFAULT_MIG_TOTAL_SLICES}; set mig_total_slices to say`);
      },
    },
  };
}

/**
 * The indexers of the clusters, each a standby until the election (ClusterWriters) gives this replica
 * the cluster's write lock. Nothing runs until a cluster is attached.
 */
/** Every watched cluster's GPU nodes, live, and their GPU time (the telemetry tells it the idle minutes). */
export function createFleetInventory(context: ServiceContext): FleetInventory {
  const { config, clock, logger } = context;
  return new FleetInventory({
    defaultOrganizationId: config.default_organization_id,
    keys: labelKeys(config),
    gpuResources: config.gpu_resources,
    settings: gpuCounting(config, logger).settings,
    clock,
    bucketMs: config.fleet_history_resolution_seconds * 1000,
  });
}

export function createIndexWriters(
  context: ServiceContext,
  deps: { backend: IndexBackend; instanceId: string; budgets: ConfigMapBudgets | undefined; fleet: FleetInventory },
): IndexWriters {
  const { config, clock, delay, logger } = context;
  const counting = gpuCounting(config, logger);
  const { fleet } = deps;
  const ledger = new FleetLedgerWriters(() => fleet.ledgers(), { clock, logger: logger.child({ component: 'fleet-history' }) });
  const indexers = new ClusterIndexers(null, {
    defaultOrganizationId: config.default_organization_id,
    keys: labelKeys(config),
    initiativeSource: config.initiative_source,
    gpuResources: config.gpu_resources,
    reservationNamespace: config.kai_reservation_namespace === '' ? null : config.kai_reservation_namespace,
    counting,
    intervalsOf: (clusterId) => fleet.intervalsOf(clusterId),
    clock,
    logger: logger.child({ component: 'indexer' }),
    yieldToLoop: () => new Promise((resolve) => setImmediate(resolve)),
    backlogAfterMs: config.index_flush_interval_ms,
    ...(deps.backend.writesOnWorker ? { stepItems: WORKER_STEP_ITEMS } : {}),
    ...(deps.budgets === undefined ? {} : { namespaceInitiatives: deps.budgets }),
  });
  // The fleet's history is written by whoever writes the cluster's workloads, through the same session.
  const targets: WriterTargets = {
    becomeWriter: (clusterId, sink) => {
      indexers.becomeWriter(clusterId, sink);
      ledger.becomeWriter(clusterId, sink);
    },
    standby: (clusterId) => {
      ledger.standby(clusterId);
      indexers.standby(clusterId);
    },
    snapshotsWritten: (clusterId) => indexers.snapshotsWritten(clusterId),
  };
  const writers = new ClusterWriters(deps.backend.leases, targets, {
    instanceId: deps.instanceId,
    retryMs: config.ha_retry_seconds * 1000,
    clock,
    delay,
    logger: logger.child({ component: 'writers' }),
  });
  return { indexers, writers, fleet, ledger };
}

/**
 * The cluster manager, with no cluster yet, and the thread that parses watch streams. Each cluster
 * added reaches the indexers, the election and the telemetry; each adds its own readiness conditions
 * as it starts.
 */
export function watchClusters(
  context: ServiceContext,
  deps: { writers: IndexWriters; telemetry: GpuTelemetry | undefined; informers: InformerOptions | undefined },
): ClusterManager {
  const { config, metrics, clock, delay, logger, parts } = context;
  const { indexers, writers, fleet } = deps.writers;
  const informerLogger = logger.child({ component: 'informers' });
  const cpus = availableCpus();
  const decodeOnWorker = config.decode_worker ?? cpus >= DECODE_WORKER_MIN_CPUS;
  informerLogger.info(
    { decodeWorker: decodeOnWorker, cpus, setting: config.decode_worker ?? 'unset' },
    decodeOnWorker ? 'Watch streams are parsed on a worker thread' : 'Watch streams are parsed on the main thread',
  );
  const decoder = decodeOnWorker ? new DecodeThread({ logger: informerLogger, niceness: config.background_niceness }) : INLINE_DECODER;
  if (decoder instanceof DecodeThread) {
    // Registered before the clusters, so that it closes after every stream it decodes has stopped.
    parts.phase('stop sources').add('watch decoder', () => decoder.close());
    metrics.gaugeFrom(
      'gpucap_watch_decode_backlog_chunks',
      'Chunks of watch streams sent to the decode worker and not decoded yet',
      () => decoder.status().backlog,
    );
    metrics.gaugeFrom(
      'gpucap_watch_decoder_restarts',
      'Decode workers that stopped while in use and were replaced, since the start',
      () => decoder.status().restarts,
    );
  }
  const clusters = new ClusterManager({
    namespaces: config.watch_namespaces,
    clock,
    delay,
    logger: informerLogger,
    tuning: deps.informers?.tuning,
    decoding: { decoder, fields: readFields(labelKeys(config)) },
    dependencyWaitMs: deps.informers?.dependencyWaitMs,
    // Detached in this order: the indexer writes its last changes, then the write lock is released.
    attach: fanOutClusters([fleet, indexers, writers, ...(deps.telemetry === undefined ? [] : [deps.telemetry])]),
  });
  parts.phase('stop sources').add('clusters', () => clusters.stop()); // each cluster's queued rows are written as it detaches
  return clusters;
}

/**
 * The index flush loop, then the clusters themselves: the home cluster and those of the remote
 * kubeconfig folder (read once here, then watched).
 */
export async function addClusters(
  context: ServiceContext,
  deps: { clusters: ClusterManager; writers: IndexWriters; home: LoadedKubeconfig | undefined },
): Promise<WatchedClusters> {
  const { config, delay, logger, parts } = context;
  const { clusters, home } = deps;
  const { indexers } = deps.writers;
  const flusher = runPeriodically(config.index_flush_interval_ms, (signal) => indexers.flushAll(signal), {
    delay,
    onError: (error) => logger.error({ err: error }, 'Index flush failed'),
  });
  parts.phase('stop sources').add('index flush loop', () => flusher.stop());
  const { ledger } = deps.writers;
  const history = runPeriodically(config.fleet_history_flush_seconds * 1000, () => ledger.flushAll(), {
    delay,
    onError: (error) => logger.error({ err: error }, 'Fleet history flush failed'),
  });
  parts.phase('stop sources').add('fleet history loop', () => history.stop());
  if (home !== undefined && config.home_cluster_enabled) {
    const { kubeConfig, origin } = home;
    clusters.add({ id: config.cluster_id, kubeConfig, origin, organizationId: config.cluster_organization_id });
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
          logger: logger.child({ component: 'informers' }),
        });
  if (remote !== undefined) {
    parts.phase('stop sources').add('remote kubeconfigs', () => remote.stop());
    await remote.start();
  }
  if (clusters.ids().length === 0 && remote === undefined) logger.warn('Watching no cluster: the index serves only what it already holds');
  return { clusters, remote, ...deps.writers };
}

/** Who holds each cluster's write lock, read every retry interval, and the clusters' metrics. */
export function followWriters(context: ServiceContext, watched: WatchedClusters): void {
  const { config, metrics, delay, logger, parts } = context;
  const { clusters, remote, indexers, writers } = watched;
  const holdersLoop = runPeriodically(config.ha_retry_seconds * 1000, () => writers.refreshHolders(), {
    delay,
    onError: (error) => logger.warn({ err: error }, 'Could not read the writers of the clusters'),
  });
  parts.phase('stop sources').add('writer holders loop', () => holdersLoop.stop());
  registerWriterMetrics(metrics.registry, () => writers.statuses());
  registerInformerMetrics(metrics.registry, {
    clusters: () => clusters.statuses(),
    problems: () => remote?.problems() ?? [],
    indexers: () => indexers.counters(),
  });
}
