// Each watched cluster has several consumers of its informer events: the workload indexer, the
// election of its writer (the namespaces say which Kubernetes cluster it is) and, with telemetry on,
// the pod directory of the exporters. ClusterManager attaches one consumer per cluster; this makes
// that one out of all of them.
import type { AttachedCluster, ClusterManagerOptions } from './cluster-manager.js';

export type ClusterRef = Parameters<ClusterManagerOptions['attach']>[0];

/** Something that takes the events of every cluster, attached as the cluster is added. */
export interface ClusterConsumer {
  attach(cluster: ClusterRef): AttachedCluster;
}

/**
 * ClusterManager's `attach`: a cluster is attached to every consumer, in the order given, and each
 * event goes to them in that order. Detached in the same order, each once the one before has
 * settled: the indexer writes its last changes before the writer releases the cluster's write lock.
 */
export function fanOutClusters(consumers: readonly ClusterConsumer[]): ClusterManagerOptions['attach'] {
  return (cluster) => {
    const attached = consumers.map((consumer) => consumer.attach(cluster));
    return {
      onEvent: (resource, event, namespace) => attached.forEach((consumer) => consumer.onEvent(resource, event, namespace)),
      detach: async () => {
        for (const consumer of attached) await consumer.detach();
      },
    };
  };
}
