// Namespaces and Nodes by name, for their labels: a Namespace gives its workloads their organization
// and initiative, a Node its pods' instance type. Only the labels and annotations of the slim copy
// (slim.ts) matter, so a change elsewhere in the object re-maps nothing. Nodes come and go with
// autoscaling: a deleted one is kept only while a cached workload still maps with it
// (deleted-objects.ts), so the cache stays the size of the cluster instead of growing with every
// node it ever had.
import { DeletedObjects } from './deleted-objects.js';
import type { WithMetadata } from './seen.js';
import type { StringMap } from '../../k8s/objects/k8s-types.js';
import type { WholeEvent } from '../../k8s/objects/resource-event.js';

const sortedEntries = (map: StringMap | undefined): [string, string | undefined][] =>
  Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

// A Namespace's annotation allowing initiatives re-attributes its workloads as its labels do.
const labelsKey = (object: WithMetadata): string =>
  JSON.stringify([sortedEntries(object.metadata?.labels), sortedEntries(object.metadata?.annotations)]);

const labelsChanged = (previous: WithMetadata | undefined, object: WithMetadata): boolean =>
  previous === undefined || labelsKey(previous) !== labelsKey(object);

const nameOf = (object: WithMetadata): string => object.metadata?.name ?? '';

export class LabelCache {
  readonly #live = new Map<string, WithMetadata>();
  // The workloads in or on a deleted object go after it, some long after, and must keep their
  // attribution (organization, initiative, instance type) in history.
  readonly #deleted = new DeletedObjects();

  /**
   * Caches the objects of an event; a relist (SYNC) replaces them all. Returns the names whose
   * workloads must be mapped again: those whose labels changed (or are new), and deleted names under
   * check. The caller maps them again, through get(), before it applies the next event: a deleted
   * name that no mapping looked up by then is forgotten.
   */
  apply(event: WholeEvent<WithMetadata>): Set<string> {
    this.#deleted.forgetUnused();
    const changed = event.type === 'SYNC' ? this.#relist(event.items) : this.#change(event.type, event.object);
    for (const name of this.#deleted.startCheck({ relist: event.type === 'SYNC' })) changed.add(name);
    return changed;
  }

  /** The object of that name, for a mapping; a deleted one is kept for as long as mappings look it up. */
  get(name: string | null | undefined): WithMetadata | undefined {
    if (name == null) return undefined;
    return this.#live.get(name) ?? this.#deleted.use(name);
  }

  /** Objects held, deleted ones included. */
  get size(): number {
    return this.#live.size + this.#deleted.size;
  }

  #change(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: WithMetadata): Set<string> {
    const name = nameOf(object);
    if (name === '') return new Set();
    const previous = this.#live.get(name) ?? this.#deleted.take(name);
    if (type === 'DELETED') {
      this.#live.delete(name);
      this.#deleted.add(name, object);
    } else {
      this.#live.set(name, object);
    }
    return labelsChanged(previous, object) ? new Set([name]) : new Set();
  }

  /** The objects the relist lacks are deleted (they went while the watch was broken). */
  #relist(items: readonly WithMetadata[]): Set<string> {
    const listed = new Map<string, WithMetadata>();
    for (const object of items) if (nameOf(object) !== '') listed.set(nameOf(object), object);
    for (const [name, object] of this.#live) {
      if (listed.has(name)) continue;
      this.#live.delete(name);
      this.#deleted.add(name, object);
    }
    const changed = new Set<string>();
    for (const [name, object] of listed) {
      const previous = this.#live.get(name) ?? this.#deleted.take(name);
      this.#live.set(name, object);
      if (labelsChanged(previous, object)) changed.add(name);
    }
    return changed;
  }
}
