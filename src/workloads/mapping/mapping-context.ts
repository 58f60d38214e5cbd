// What a mapper needs besides the object itself: the cluster's settings, the related objects the
// caller has looked up (namespace, node, a Job's pods) and whether the object was deleted.
import type { NamespaceInitiatives } from '../../domain/namespace-initiatives.js';
import type { Namespace, Node } from '../../k8s/objects/k8s-types.js';
import type { InitiativeSource } from '../attribution/initiative-source.js';
import type { LabelKeys } from '../attribution/label-keys.js';
import type { PodFacts } from '../facts/pod-facts.js';
import type { PodShares } from './pod-shares.js';

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
  /** Who decides the initiative (absent: `labels`). */
  initiativeSource?: InitiativeSource;
  gpuResources: readonly string[];
  /** The share each pod holds; absent: every device counts as a whole GPU (rows before shares). */
  shares?: PodShares;
  namespaceInitiatives?: NamespaceInitiatives;
}
