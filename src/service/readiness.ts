// When the service is ready (/readyz, /v1/health): the clusters' informers and writers, the capacity
// ConfigMaps and the exporters, refreshed on a short loop.
import { ClusterReadiness } from '../admin/cluster-readiness.js';
import type { ReadinessTracker } from '../admin/readiness.js';
import { runPeriodically } from '../runtime/periodic.js';
import type { CapacityRuntime } from './capacity.js';
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
    telemetry: TelemetryRuntime | undefined;
  },
): void {
  const { config, clock, delay, logger, parts } = context;
  const { readiness, watched, capacity, telemetry } = deps;
  const unreachableAfterMs = config.cluster_unreachable_after_seconds * 1000;
  const clusterReadiness = new ClusterReadiness(readiness, {
    clock,
    unreachableAfterMs,
    indexed: (clusterId) => watched.writers.indexed(clusterId),
  });
  if (capacity !== undefined) readiness.require('capacity');
  const refreshReadiness = () => {
    clusterReadiness.update(watched.clusters.statuses(), watched.remote?.problems() ?? []);
    if (capacity !== undefined) refreshCapacityReadiness(capacity, readiness, { now: clock.now(), unreachableAfterMs });
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

/** Ready once the ConfigMaps were listed (or their API stayed unreachable too long); degraded while one is rejected. */
function refreshCapacityReadiness(
  capacity: CapacityRuntime,
  readiness: ReadinessTracker,
  options: { now: number; unreachableAfterMs: number },
): void {
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
