// What the informers of each watched cluster report, read by readiness, health and /metrics. Produced
// by src/k8s (which knows Kubernetes), consumed by src/admin (which knows probes and Prometheus).

/**
 * The collections watched: the first four in every cluster, Dynamic Resource Allocation's three where
 * the API server serves resource.k8s.io (src/k8s/dra-discovery.ts).
 */
export const CORE_RESOURCES = ['namespaces', 'nodes', 'jobs', 'pods'] as const;
export const DRA_RESOURCES = ['resourceclaims', 'resourceslices', 'deviceclasses'] as const;
export const WATCHED_RESOURCES = [...CORE_RESOURCES, ...DRA_RESOURCES] as const;
export type WatchedResource = (typeof WATCHED_RESOURCES)[number];

export interface InformerStatus {
  resource: WatchedResource;
  /** Set when the collection is watched in one namespace (GPUCAP_WATCH_NAMESPACES). */
  namespace?: string;
  /** The first LIST was delivered; stays true through later faults (the index holds a full picture). */
  synced: boolean;
  /** The last attempt failed and nothing succeeded since. */
  failing: boolean;
  lastError?: { message: string; statusCode?: number; at: number };
  relists: number;
  restarts: number;
  events: { added: number; modified: number; deleted: number };
  /** Age of the open watch; undefined while none is open. */
  watchAgeMs?: number;
  /** False while waiting for Namespaces and Nodes to sync first. */
  started: boolean;
}

export interface ClusterStatus {
  clusterId: string;
  /** Where its credentials come from (a kubeconfig path, or the in-cluster service account). */
  origin: string;
  organizationId?: string;
  /** When this cluster's informers were started (epoch ms). */
  since: number;
  informers: InformerStatus[];
}

/** What each cluster's workload indexer has done, for /metrics. */
export interface IndexerCounters {
  clusterId: string;
  events: number;
  rowsWritten: number;
  intervalsWritten: number;
  cancelledByReconcile: number;
  flushErrors: number;
  pending: number;
}

/** A remote kubeconfig file that could not be turned into a cluster; nothing is watched for it. */
export interface ClusterConfigProblem {
  file: string;
  message: string;
}
