// Turns what the informers report into readiness conditions, one per (cluster, resource[, namespace]):
// the service becomes ready once every informer of every reachable cluster has synced. A cluster whose
// informers keep failing without ever syncing is unreachable: after a grace period it stops holding
// readiness back (the others serve), and it shows as degraded until it syncs. A remote kubeconfig that
// was rejected is degraded too, never awaited.
import type { ClusterConfigProblem, ClusterStatus, InformerStatus } from '../domain/cluster-status.js';
import type { Clock } from '../domain/clock.js';
import type { ReadinessTracker } from './readiness.js';

const INFORMER_PREFIX = 'cluster/';
const CONFIG_PREFIX = 'remote-kubeconfig/';

export function informerCondition(clusterId: string, informer: Pick<InformerStatus, 'resource' | 'namespace'>): string {
  return `${INFORMER_PREFIX}${clusterId}/${informer.resource}${informer.namespace === undefined ? '' : `/${informer.namespace}`}`;
}

export interface ClusterReadinessOptions {
  clock: Clock;
  unreachableAfterMs: number;
  /**
   * Whether what the cluster's informers listed is written to the index yet (default: always). A
   * LIST of 100k pods takes seconds to write; ready before that, the API would answer with part of it.
   */
  indexed?: (clusterId: string) => boolean;
}

export class ClusterReadiness {
  constructor(
    private readonly readiness: ReadinessTracker,
    private readonly options: ClusterReadinessOptions,
  ) {}

  /** Applies the current state of every cluster; conditions of clusters no longer watched are dropped. */
  update(clusters: readonly ClusterStatus[], problems: readonly ClusterConfigProblem[]): void {
    const current = new Set<string>();
    const now = this.options.clock.now();
    for (const cluster of clusters) {
      const indexed = this.options.indexed?.(cluster.clusterId) ?? true;
      const unreachable = now - cluster.since >= this.options.unreachableAfterMs && cluster.informers.some((i) => !i.synced && i.failing);
      for (const informer of cluster.informers) {
        const name = informerCondition(cluster.clusterId, informer);
        current.add(name);
        this.readiness.require(name);
        this.readiness.setFailure(
          name,
          informer.failing ? `cluster "${cluster.clusterId}" ${informer.resource}: ${informer.lastError?.message ?? 'failing'}` : null,
        );
        if (informer.synced && indexed) this.readiness.markReady(name);
        // Every informer of an unreachable cluster is waived, also those waiting to start behind a
        // failing Namespaces or Nodes informer.
        else if (unreachable) this.readiness.waive(name);
      }
    }
    for (const problem of problems) {
      const name = CONFIG_PREFIX + problem.file;
      current.add(name);
      this.readiness.markReady(name);
      this.readiness.setFailure(name, problem.message);
    }
    for (const name of this.readiness.names()) {
      if ((name.startsWith(INFORMER_PREFIX) || name.startsWith(CONFIG_PREFIX)) && !current.has(name)) this.readiness.forget(name);
    }
  }
}
