// What a mapper needs besides the object itself: the cluster's settings, the related objects the
// caller has looked up (namespace, node, a Job's pods) and whether the object was deleted.
import type { Namespace, Node } from '../k8s/objects/k8s-types.js';
import type { PodFacts } from './pod-facts.js';

/** Label and annotation keys read for attribution (DECISIONS "Where a workload comes from"). */
export interface LabelKeys {
  initiative: string;
  organization: string;
  submittedBy: string;
  managed: string;
  kueueQueueName: string;
  instanceType: string;
  gpuProduct: string;
}

export const DEFAULT_LABEL_KEYS: Readonly<LabelKeys> = Object.freeze({
  initiative: 'gpucap.io/initiative',
  organization: 'gpucap.io/organization',
  submittedBy: 'gpucap.io/submitted-by',
  managed: 'gpucap.io/managed',
  kueueQueueName: 'kueue.x-k8s.io/queue-name',
  instanceType: 'node.kubernetes.io/instance-type',
  gpuProduct: 'nvidia.com/gpu.product',
});

/**
 * Initiatives the capacity budgets assign to namespaces (capacity.yaml `namespaces`), per
 * organization. Consulted after the object's and the Namespace's labels, before the namespace name.
 */
export interface NamespaceInitiatives {
  initiativeOf(organizationId: string, namespace: string): string | undefined;
}

export interface MappingContext {
  clusterId: string;
  /** The organization configured for this cluster, if any. */
  clusterOrganizationId?: string;
  /** The service's default organization. */
  defaultOrganizationId: string;
  /** The object's Namespace, when known. */
  namespace?: Namespace;
  /** The node the (first) pod runs on, when known. */
  node?: Node;
  /** A Job's pods (ignored for Pods). */
  pods?: readonly PodFacts[];
  /** Set when the object was deleted from the cluster (delete event, or missing after a relist). */
  deleted?: { at: number };
  /** When the object was observed; the last fallback for a terminal time Kubernetes did not record. */
  observedAt?: number;
  keys: Readonly<LabelKeys>;
  gpuResources: readonly string[];
  namespaceInitiatives?: NamespaceInitiatives;
}
