// In-memory object store with one global, monotonically increasing resourceVersion (like etcd's
// revision) and an event log that watches replay from. `compact(rv)` drops the log up to rv, after
// which a watch or continue token from an older version must be answered with 410 Gone.
import { randomUUID } from 'node:crypto';
import { RESOURCES, type KubeObject, type ResourceName } from './resources.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  resource: ResourceName;
  rv: number;
  object: KubeObject;
  /** The state before this event (MODIFIED only): a label-selected watch needs it to see objects leave. */
  previous?: KubeObject;
}

export interface ObjectKey {
  namespace?: string;
  name: string;
}

export type StoreErrorCode = 'AlreadyExists' | 'NotFound' | 'Invalid';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface PageQuery {
  namespace?: string;
  /** Exclusive start key (namespace/name), from a continue token. */
  after?: string;
  matches?: (object: KubeObject) => boolean;
  limit?: number;
}

export interface StoreOptions {
  /** Source of creationTimestamp; passed in so tests can pin it. */
  now?: () => Date;
}

export class KubeStore {
  private rv = 0;
  private compacted = 0;
  private readonly objects = new Map<ResourceName, Map<string, KubeObject>>();
  private log: StoreEvent[] = [];
  private readonly sorted = new Map<ResourceName, string[]>();
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  private readonly now: () => Date;

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    for (const name of Object.keys(RESOURCES) as ResourceName[]) this.objects.set(name, new Map());
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Versions strictly below this one can no longer be watched or continued from. */
  get compactedVersion(): number {
    return this.compacted;
  }

  create(resource: ResourceName, object: KubeObject): KubeObject {
    const key = keyOf(object.metadata);
    if (this.table(resource).has(key)) throw new StoreError('AlreadyExists', `Cannot create ${resource} "${key}": it already exists`);
    const metadata = { uid: randomUUID(), creationTimestamp: this.now().toISOString(), ...object.metadata };
    return this.commit('ADDED', resource, { ...object, metadata });
  }

  /** Replaces the whole object, keeping uid and creationTimestamp (as a PUT does). */
  update(resource: ResourceName, object: KubeObject): KubeObject {
    const current = this.mustGet(resource, object.metadata);
    const metadata = { ...object.metadata, uid: current.metadata.uid, creationTimestamp: current.metadata.creationTimestamp };
    return this.commit('MODIFIED', resource, { ...object, metadata });
  }

  /** Merges `status` into the object's status (the /status subresource; how kubelet and controllers write). */
  patchStatus(resource: ResourceName, key: ObjectKey, status: Record<string, unknown>): KubeObject {
    const current = this.mustGet(resource, key);
    const previous = (current.status ?? {}) as Record<string, unknown>;
    return this.commit('MODIFIED', resource, { ...current, status: { ...previous, ...status } });
  }

  /** Deletes and emits DELETED carrying the last state with a fresh resourceVersion; undefined if absent. */
  delete(resource: ResourceName, key: ObjectKey): KubeObject | undefined {
    const current = this.table(resource).get(keyOf(key));
    return current === undefined ? undefined : this.commit('DELETED', resource, current);
  }

  get(resource: ResourceName, key: ObjectKey): KubeObject | undefined {
    const found = this.table(resource).get(keyOf(key));
    return found === undefined ? undefined : structuredClone(found);
  }

  /** Current objects sorted by namespace/name, the order etcd keys (and so LIST chunks) come in. */
  list(resource: ResourceName, namespace?: string): KubeObject[] {
    return this.page(resource, { namespace }).items;
  }

  /**
   * One LIST chunk: up to `limit` matching objects with a key after `after`. Stops one match past the
   * limit so paging 100k pods stays linear; `remaining` is exact only without namespace or selector
   * (the real API likewise omits remainingItemCount for selected lists).
   */
  page(resource: ResourceName, query: PageQuery): { items: KubeObject[]; more: boolean; remaining?: number } {
    const table = this.table(resource);
    const keys = this.sortedKeys(resource);
    const after = query.after;
    const start = after === undefined ? 0 : lowerBound(keys, (k) => k > after);
    const limit = query.limit ?? Infinity;
    const items: KubeObject[] = [];
    for (let i = start; i < keys.length; i++) {
      const object = table.get(keys[i] ?? '');
      if (object === undefined) continue;
      if (query.namespace !== undefined && object.metadata.namespace !== query.namespace) continue;
      if (query.matches !== undefined && !query.matches(object)) continue;
      if (items.length === limit) {
        const filtered = query.namespace !== undefined || query.matches !== undefined;
        return { items, more: true, ...(filtered ? {} : { remaining: keys.length - i }) };
      }
      items.push(structuredClone(object));
    }
    return { items, more: false };
  }

  /** Events after `rv` (exclusive), or 'expired' when the log no longer reaches back that far. */
  eventsSince(rv: number): StoreEvent[] | 'expired' {
    if (rv < this.compacted) return 'expired';
    return this.log.filter((e) => e.rv > rv).map((e) => structuredClone(e));
  }

  /** Live events, delivered synchronously after each commit; returns the unsubscribe function. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the event log up to `rv` (default: now), like an etcd compaction. */
  compact(rv: number = this.rv): void {
    this.compacted = Math.max(this.compacted, Math.min(rv, this.rv));
    this.log = this.log.filter((e) => e.rv > this.compacted);
  }

  private commit(type: EventType, resource: ResourceName, object: KubeObject): KubeObject {
    const info = RESOURCES[resource];
    if (info.namespaced !== (object.metadata.namespace !== undefined)) {
      throw new StoreError('Invalid', `Cannot store ${resource} "${object.metadata.name}": namespace is ${info.namespaced ? 'required' : 'not allowed'}`);
    }
    this.rv += 1;
    const stored: KubeObject = structuredClone({
      ...object,
      apiVersion: info.apiVersion,
      kind: info.kind,
      metadata: { ...object.metadata, resourceVersion: String(this.rv) },
    });
    const table = this.table(resource);
    const key = keyOf(stored.metadata);
    const previous = table.get(key);
    if (type === 'DELETED') table.delete(key);
    else table.set(key, stored);
    // Only creates and deletes change the key set; MODIFIED keeps the sorted cache valid.
    if (type !== 'MODIFIED') this.sorted.delete(resource);
    const event: StoreEvent = { type, resource, rv: this.rv, object: stored, ...(type === 'MODIFIED' && previous ? { previous } : {}) };
    this.log.push(event);
    for (const listener of [...this.listeners]) listener(structuredClone(event));
    return structuredClone(stored);
  }

  private sortedKeys(resource: ResourceName): string[] {
    let keys = this.sorted.get(resource);
    if (keys === undefined) {
      keys = [...this.table(resource).keys()].sort();
      this.sorted.set(resource, keys);
    }
    return keys;
  }

  private mustGet(resource: ResourceName, key: ObjectKey): KubeObject {
    const found = this.table(resource).get(keyOf(key));
    if (found === undefined) throw new StoreError('NotFound', `Cannot find ${resource} "${keyOf(key)}"`);
    return found;
  }

  private table(resource: ResourceName): Map<string, KubeObject> {
    const table = this.objects.get(resource);
    if (table === undefined) throw new StoreError('NotFound', `Unknown resource "${resource}"`);
    return table;
  }
}

export function keyOf(key: ObjectKey): string {
  return key.namespace === undefined ? key.name : `${key.namespace}/${key.name}`;
}

/** First index whose key satisfies the (monotone) predicate. */
function lowerBound(keys: string[], predicate: (key: string) => boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (predicate(keys[mid] ?? '')) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
