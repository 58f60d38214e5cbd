// A LIST delivered page by page (PAGE events, then a `paged` SYNC) gathered into one snapshot, each
// object reduced as its page arrives: a consumer holds what it keeps of the LIST, never the LIST. A
// LIST that fails after some pages is followed by a new one whose first page voids them.
import type { ResourceEvent } from './resource-event.js';

type ListEvent<T> = Extract<ResourceEvent<T>, { type: 'SYNC' | 'PAGE' }>;

export class SnapshotPages<T, R> {
  /** What is kept of one object. */
  readonly reduce: (object: T) => R;
  /** Pages gathered per scope: a namespaced informer's LIST (by namespace), or a cluster-wide one. */
  readonly #gathered = new Map<string | undefined, R[]>();

  constructor(reduce: (object: T) => R) {
    this.reduce = reduce;
  }

  /** A PAGE is kept, and gives undefined; a SYNC gives the whole snapshot: its pages, or its own items. */
  take(event: ListEvent<T>): R[] | undefined {
    const scope = event.namespace;
    if (event.type === 'PAGE') {
      let gathered = event.first ? undefined : this.#gathered.get(scope);
      if (gathered === undefined) this.#gathered.set(scope, (gathered = []));
      for (const item of event.items) gathered.push(this.reduce(item));
      return undefined;
    }
    if (event.paged !== true) return event.items.map(this.reduce);
    const gathered = this.#gathered.get(scope) ?? [];
    this.#gathered.delete(scope);
    return gathered;
  }
}
