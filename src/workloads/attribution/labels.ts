// Attribution of a workload (DECISIONS "Where a workload comes from"): each field reads its labels in
// a fixed order of precedence and ends at a fallback, so every row has a value.
import { UNKNOWN } from '../../domain/workload.js';
import { instanceTypeFromLabels } from '../../domain/instance-type.js';
import { capacityTypeFromLabels, type CapacityType } from '../../domain/capacity-type.js';
import type { Namespace, Node, ObjectMeta, StringMap } from '../../k8s/objects/k8s-types.js';
import type { NamespaceInitiatives } from '../../domain/namespace-initiatives.js';
import type { LabelKeys } from './label-keys.js';
import { DEFAULT_INITIATIVE_SOURCE, type InitiativeSource } from './initiative-source.js';

export { UNKNOWN };

/** A non-empty value of a label or annotation, else undefined (an empty label means "not set"). */
function valueOf(map: StringMap | undefined, key: string): string | undefined {
  const value = map?.[key];
  return value === undefined || value.trim() === '' ? undefined : value;
}

interface InitiativeOptions {
  keys: LabelKeys;
  /** Who decides (absent: `labels`, initiative-source.ts). */
  initiativeSource?: InitiativeSource;
  namespace?: Namespace;
  organizationId?: string;
  namespaceInitiatives?: NamespaceInitiatives;
}

/** The object's own initiative label, when set. */
export function ownInitiative(meta: ObjectMeta | undefined, keys: LabelKeys): string | undefined {
  return valueOf(meta?.labels, keys.initiative);
}

/**
 * Whether the Namespace's allowed-initiatives annotation lists `initiative`: comma-separated, each
 * item trimmed, empty items ignored. An unknown Namespace allows nothing.
 */
export function namespaceAllows(namespace: Namespace | undefined, keys: LabelKeys, initiative: string): boolean {
  const listed = valueOf(namespace?.metadata?.annotations, keys.allowedInitiatives);
  if (listed === undefined) return false;
  return initiative !== '' && listed.split(',').some((item) => item.trim() === initiative);
}

/**
 * `labels`: object label → Namespace label → the organization's capacity budget's namespace mapping →
 * namespace name. `namespace`: the same, but the object label counts only when the Namespace allows it.
 */
export function initiativeOf(meta: ObjectMeta | undefined, options: InitiativeOptions): string {
  return initiativeFrom({ own: ownInitiative(meta, options.keys), namespace: meta?.namespace }, options);
}

/** initiativeOf for an object of which the caches kept its own initiative label (`own`) and namespace. */
export function initiativeFrom(object: { own: string | undefined; namespace: string | undefined }, options: InitiativeOptions): string {
  const namespaceName = object.namespace ?? options.namespace?.metadata?.name;
  const mapped =
    options.namespaceInitiatives === undefined || options.organizationId === undefined || namespaceName === undefined
      ? undefined
      : options.namespaceInitiatives.initiativeOf(options.organizationId, namespaceName);
  const ofNamespace = valueOf(options.namespace?.metadata?.labels, options.keys.initiative);
  return ownCounted(object.own, options) ?? ofNamespace ?? mapped ?? namespaceName ?? '';
}

/** The object's own label, if it counts under the configured source. */
function ownCounted(own: string | undefined, options: InitiativeOptions): string | undefined {
  if (own === undefined || (options.initiativeSource ?? DEFAULT_INITIATIVE_SOURCE) === 'labels') return own;
  return namespaceAllows(options.namespace, options.keys, own) ? own : undefined;
}

/** Namespace label → the cluster's configured organization → the service's default organization. */
export function organizationOf(options: {
  keys: LabelKeys;
  namespace?: Namespace;
  clusterOrganizationId?: string;
  defaultOrganizationId: string;
}): string {
  return (
    valueOf(options.namespace?.metadata?.labels, options.keys.organization) ??
    (options.clusterOrganizationId === undefined || options.clusterOrganizationId === ''
      ? undefined
      : options.clusterOrganizationId) ??
    options.defaultOrganizationId
  );
}

/** Label → annotation → `unknown`. */
export function submittedByOf(meta: ObjectMeta | undefined, keys: LabelKeys): string {
  return valueOf(meta?.labels, keys.submittedBy) ?? valueOf(meta?.annotations, keys.submittedBy) ?? UNKNOWN;
}

/**
 * The managed label when it says `true` or `false` (any case), else whether the object carries Kueue's
 * queue-name label. Any other value of the managed label is ignored, as if absent.
 */
export function isManagedOf(meta: ObjectMeta | undefined, keys: LabelKeys): boolean {
  const managed = valueOf(meta?.labels, keys.managed)?.trim().toLowerCase();
  if (managed === 'true') return true;
  if (managed === 'false') return false;
  return valueOf(meta?.labels, keys.kueueQueueName) !== undefined;
}

/** Node's instance-type label → its GPU product label → `unknown` (also when the node is not known). */
export function instanceTypeOf(node: Node | undefined, keys: LabelKeys): string {
  return instanceTypeFromLabels(node?.metadata?.labels, keys);
}

/** Node's capacity-type label (the configured one, else the well-known ones) → null (also when the node is not known). */
export function capacityTypeOf(node: Node | undefined, keys: LabelKeys): CapacityType | null {
  return capacityTypeFromLabels(node?.metadata?.labels, keys.capacityType);
}
