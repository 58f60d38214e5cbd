// What a reflector's consumer holds, for comparison with what the API server (real or simulated)
// lists: applies every event to a Map and records any watch event that is not newer than the last one
// (a replay or a double). resourceVersions are etcd revisions (or the simulator's counter), so they
// increase across all resources.
import type { ReflectorEvent } from '../../src/k8s/reflector.js';

/** Any Kubernetes object, as far as this map reads it. */
export interface KeyedObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

export class ObjectMap<KubeObject extends KeyedObject = KeyedObject> {
  readonly objects = new Map<string, KubeObject>();
  /** Every event but the pages of a paged LIST, whose SYNC is recorded with the pages' objects. */
  readonly events: ReflectorEvent<KubeObject>[] = [];
  /** PAGE events taken (a paged reflector). */
  pages = 0;
  #gathered: KubeObject[] = [];
  readonly doubles: string[] = [];
  private lastRv = 0;

  apply = (received: ReflectorEvent<KubeObject>): void => {
    if (received.type === 'PAGE') {
      this.pages += 1;
      if (received.first) this.#gathered = [];
      this.#gathered.push(...received.items);
      return;
    }
    const event: typeof received = received.type === 'SYNC' && received.paged === true ? { ...received, items: this.#gathered } : received;
    this.events.push(event);
    if (event.type === 'SYNC') {
      this.#gathered = [];
      this.objects.clear();
      for (const item of event.items) this.objects.set(objectKey(item), item);
      this.lastRv = Number(event.resourceVersion);
      return;
    }
    const rv = Number(event.resourceVersion);
    if (rv <= this.lastRv) this.doubles.push(`${event.type} ${objectKey(event.object)} at ${rv} after ${this.lastRv}`);
    this.lastRv = rv;
    if (event.type === 'DELETED') this.objects.delete(objectKey(event.object));
    else this.objects.set(objectKey(event.object), event.object);
  };

  count(type: ReflectorEvent<KubeObject>['type']): number {
    return this.events.filter((e) => e.type === type).length;
  }

  /** "ADDED ns/name", in delivery order, of the watch events about objects whose key matches. */
  eventsFor(match: (key: string) => boolean): string[] {
    const seen: string[] = [];
    for (const event of this.events) {
      if (event.type !== 'SYNC' && event.type !== 'PAGE' && match(objectKey(event.object))) seen.push(`${event.type} ${objectKey(event.object)}`);
    }
    return seen;
  }

  /** key → resourceVersion, comparable with snapshotOf(). */
  snapshot(): Record<string, string | undefined> {
    return snapshotOf([...this.objects.values()]);
  }
}

export function objectKey(object: KeyedObject): string {
  return object.metadata.namespace === undefined ? object.metadata.name : `${object.metadata.namespace}/${object.metadata.name}`;
}

export function snapshotOf(objects: readonly KeyedObject[]): Record<string, string | undefined> {
  return Object.fromEntries(objects.map((o): [string, string | undefined] => [objectKey(o), o.metadata.resourceVersion]).sort(([a], [b]) => a.localeCompare(b)));
}
