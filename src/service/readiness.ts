// When the service is ready (/readyz, /v1/health): the clusters' informers and writers, the capacity
// ConfigMaps and the exporters, refreshed on a short loop.
import { ClusterReadiness } from '../admin/cluster-readiness.js';
import type { ReadinessTracker } from '../admin/readiness.js';
import { runPeriodically } from '../runtime/periodic.js';
import type { CapacityRuntime } from './capacity.js';
import type { PricesRuntime } from './prices.js';
import type { WatchedClusters } from './clusters-and-writers.js';
import type { ServiceContext } from './service-context.js';
import type { TelemetryRuntime } from './telemetry.js';

// Readiness follows the informers within this; cheap (a walk over a few status objects).
const READINESS_REFRESH_MS = 250;

/**
 * Declares the conditions of the parts started, then lets go of 'startup': until then the tracker
 * might see the few conditions declared so far met and call the service ready too early.
 */
export function startReadiness(
  context: ServiceContext,
  deps: {
    readiness: ReadinessTracker;
    watched: WatchedClusters;
    capacity: CapacityRuntime | undefined;
    prices: PricesRuntime | undefined;
    telemetry: TelemetryRuntime | undefined;
  },
): void {
  const { config, clock, delay, logger, parts } = context;
  const { readiness, watched, telemetry } = deps;
  // The operators' ConfigMaps share one condition, `capacity`: prices are read like budgets, and a
  // deployment without prices ConfigMaps reports exactly what it did before they existed.
  const configMaps: ConfigMapSource[] = [];
  if (deps.capacity !== undefined) configMaps.push({ what: 'capacity', ...deps.capacity, files: deps.capacity.budgets });
  if (deps.prices !== undefined) configMaps.push({ what: 'prices', ...deps.prices, files: deps.prices.prices });
  const unreachableAfterMs = config.cluster_unreachable_after_seconds * 1000;
  const clusterReadiness = new ClusterReadiness(readiness, {
    clock,
    unreachableAfterMs,
    indexed: (clusterId) => watched.writers.indexed(clusterId),
  });
  if (configMaps.length > 0) readiness.require('capacity');
  const refreshReadiness = () => {
    clusterReadiness.update(watched.clusters.statuses(), watched.remote?.problems() ?? []);
    if (configMaps.length > 0) refreshConfigMapReadiness(configMaps, readiness, { now: clock.now(), unreachableAfterMs });
    if (telemetry === undefined) return;
    readiness.setFailure('telemetry', telemetry.sampler.failingEverywhere() ? 'no dcgm-exporter answered the last scrape' : null);
  };
  refreshReadiness();
  readiness.markReady('startup');
  const readinessLoop = runPeriodically(READINESS_REFRESH_MS, refreshReadiness, {
    delay,
    onError: (error) => logger.error({ err: error }, 'Readiness refresh failed'),
  });
  parts.phase('stop sources').add('readiness loop', () => readinessLoop.stop());
}

interface ConfigMapSource {
  what: string;
  files: { readonly synced: boolean; problems(): readonly unknown[] };
  watch: { status(): { failing: boolean; lastError?: { message: string } } };
  startedAt: number;
}

/** Ready once the ConfigMaps were listed (or their API stayed unreachable too long); degraded while one is rejected. */
function refreshConfigMapReadiness(
  sources: readonly ConfigMapSource[],
  readiness: ReadinessTracker,
  options: { now: number; unreachableAfterMs: number },
): void {
  const settled = sources.map(({ files, watch, startedAt }) =>
    files.synced ? 'synced' : watch.status().failing && options.now - startedAt >= options.unreachableAfterMs ? 'unreachable' : 'waiting');
  if (settled.every((state) => state === 'synced')) readiness.markReady('capacity');
  else if (settled.every((state) => state !== 'waiting')) readiness.waive('capacity');
  const failures: string[] = [];
  for (const { what, files, watch } of sources) {
    const status = watch.status();
    const problems = files.problems();
    if (status.failing) failures.push(`${what} ConfigMaps cannot be read: ${status.lastError?.message ?? 'failing'}`);
    else if (problems.length > 0) failures.push(`${problems.length} ${what} ConfigMap(s) rejected`);
  }
  readiness.setFailure('capacity', failures.length > 0 ? failures.join('; ') : null);
}
