// Namespaces and Nodes by name, for their labels: a Namespace gives its workloads their organization
// and initiative, a Node its pods' instance type. Only the labels matter, so a change elsewhere in
// the object re-maps nothing.
import type { WithMetadata } from './seen.js';
import type { ResourceEvent } from './workload-sink.js';

const labelsKey = (object: WithMetadata | undefined): string =>
  JSON.stringify(Object.entries(object?.metadata?.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export class LabelCache {
  // Deleted objects stay cached: the workloads in or on them are deleted right after and must keep
  // their attribution (organization, initiative, instance type) in history.
  readonly #objects = new Map<string, WithMetadata>();

  /** Caches the objects of an event, deletions included; returns the names whose labels changed (or are new). */
  apply(event: ResourceEvent<WithMetadata>): Set<string> {
    const changed = new Set<string>();
    for (const object of event.type === 'SYNC' ? event.items : [event.object]) {
      const name = object.metadata?.name ?? '';
      if (name === '') continue;
      const previous = this.#objects.get(name);
      this.#objects.set(name, object);
      if (previous === undefined || labelsKey(previous) !== labelsKey(object)) changed.add(name);
    }
    return changed;
  }

  get(name: string | null | undefined): WithMetadata | undefined {
    return name == null ? undefined : this.#objects.get(name);
  }
}
