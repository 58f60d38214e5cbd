// What a reflector's consumer holds, for comparison with what the API server lists: applies every
// event to a Map and records any watch event that is not newer than the last one (a replay or a
// double). Real resourceVersions are etcd revisions, so they increase across all resources.
import type { ReflectorEvent } from '../../../src/k8s/reflector.js';
import type { KubeObject } from './admin-client.js';

export class ObjectMap {
  readonly objects = new Map<string, KubeObject>();
  readonly events: ReflectorEvent<KubeObject>[] = [];
  readonly doubles: string[] = [];
  private lastRv = 0;

  apply = (event: ReflectorEvent<KubeObject>): void => {
    this.events.push(event);
    if (event.type === 'SYNC') {
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

  /** "ADDED ns/name", in delivery order, of the watch events about objects whose key matches. */
  eventsFor(match: (key: string) => boolean): string[] {
    const seen: string[] = [];
    for (const event of this.events) {
      if (event.type !== 'SYNC' && match(objectKey(event.object))) seen.push(`${event.type} ${objectKey(event.object)}`);
    }
    return seen;
  }

  /** key → resourceVersion, comparable with snapshotOf(). */
  snapshot(): Record<string, string> {
    return snapshotOf([...this.objects.values()]);
  }
}

export function objectKey(object: KubeObject): string {
  return object.metadata.namespace === undefined ? object.metadata.name : `${object.metadata.namespace}/${object.metadata.name}`;
}

export function snapshotOf(objects: KubeObject[]): Record<string, string> {
  return Object.fromEntries(objects.map((o): [string, string] => [objectKey(o), o.metadata.resourceVersion]).sort(([a], [b]) => a.localeCompare(b)));
}
