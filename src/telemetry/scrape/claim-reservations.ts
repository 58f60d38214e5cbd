// Which pods each ResourceClaim of one cluster is reserved for, so that a dcgm-exporter series that
// names a DRA claim and no pod (`dra_claim_*` labels) can be traced to a pod, and through the pod
// directory to its workload. Fed the cluster's ResourceClaim events. Keeps per claim its name and the
// names of its reserved pods, nothing more: claims by namespace then name (no key string of their own),
// namespace names shared, and a lone reserved pod (the usual claim) held as its name, not as an array.
import type { ResourceClaim } from '../../k8s/objects/dra-types.js';
import type { ResourceEvent } from '../../k8s/objects/resource-event.js';
import { SnapshotPages } from '../../k8s/objects/snapshot-pages.js';
import { StringTable } from '../../k8s/objects/string-table.js';

/** The names of a claim's reserved pods, in reservedFor's order: one name, or several. */
type ReservedPods = string | readonly string[];

interface ClaimEntry {
  namespace: string;
  name: string;
  /** null: reserved for no pod (not yet, or no longer), which the map does not keep. */
  pods: ReservedPods | null;
}

const NO_PODS: readonly string[] = [];

export class ClaimReservations {
  /** namespace → claim name → reserved pods, for claims reserved for at least one pod. */
  readonly #byNamespace = new Map<string, Map<string, ReservedPods>>();
  readonly #namespaces: StringTable;
  readonly #pages = new SnapshotPages<ResourceClaim, ClaimEntry | null>(entryOf);
  #claims = 0;

  /** `namespaces`: the table the pod directory interns namespace names in, so both share one copy. */
  constructor(namespaces: StringTable = new StringTable()) {
    this.#namespaces = namespaces;
  }

  onClaimEvent(event: ResourceEvent<ResourceClaim>, namespace: string | undefined): void {
    if (event.type === 'SYNC' || event.type === 'PAGE') {
      const entries = this.#pages.take(namespace === undefined ? event : { ...event, namespace });
      if (entries === undefined) return;
      // A namespaced informer's snapshot replaces that namespace only.
      for (const name of namespace === undefined ? [...this.#byNamespace.keys()] : [namespace]) this.#dropNamespace(name);
      for (const entry of entries) if (entry !== null) this.#put(entry);
      return;
    }
    const entry = entryOf(event.object);
    if (entry === null) return;
    if (event.type === 'DELETED') entry.pods = null;
    this.#put(entry);
  }

  /** The pods the claim is reserved for, in reservedFor's order; empty for a claim not known here. */
  podsOf(namespace: string, claim: string): readonly string[] {
    const pods = this.#byNamespace.get(namespace)?.get(claim);
    if (pods === undefined) return NO_PODS;
    return typeof pods === 'string' ? [pods] : pods;
  }

  /** Claims known to be reserved for a pod. */
  get size(): number {
    return this.#claims;
  }

  #put(entry: ClaimEntry): void {
    const { namespace, name, pods } = entry;
    let claims = this.#byNamespace.get(namespace);
    if (pods === null) {
      if (claims === undefined || !claims.delete(name)) return;
      this.#claims -= 1;
      if (claims.size === 0) this.#byNamespace.delete(namespace);
      return;
    }
    if (claims === undefined) this.#byNamespace.set(this.#namespaces.intern(namespace), (claims = new Map()));
    if (!claims.has(name)) this.#claims += 1;
    claims.set(name, pods);
  }

  #dropNamespace(namespace: string): void {
    const claims = this.#byNamespace.get(namespace);
    if (claims === undefined) return;
    this.#claims -= claims.size;
    this.#byNamespace.delete(namespace);
  }
}

/** What is kept of a claim: its pod consumers' names (reservedFor may also name other kinds of consumer). */
function entryOf(claim: ResourceClaim): ClaimEntry | null {
  const name = claim.metadata?.name;
  const namespace = claim.metadata?.namespace;
  if (name === undefined || namespace === undefined) return null;
  const pods: string[] = [];
  for (const consumer of claim.status?.reservedFor ?? []) {
    // As src/k8s/gpus/dra-share.ts reads it: a consumer that names no resource is taken for a pod.
    if ((consumer.resource ?? 'pods') === 'pods' && typeof consumer.name === 'string' && consumer.name !== '') pods.push(consumer.name);
  }
  return { namespace, name, pods: pods.length === 0 ? null : pods.length === 1 ? (pods[0] as string) : pods };
}
