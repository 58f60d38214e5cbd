// In-memory object store with one global, monotonically increasing resourceVersion (like etcd's
// revision) and an event log that watches replay from. `compact(rv)` drops the log up to rv, after
// which a watch or continue token from an older version must be answered with 410 Gone.
//
// Versions start at 1000, not 0: a real cluster's versions are never small, and "0" has its own
// meaning on the wire (a watch or LIST from "0" means "any version", see watch.ts), so a store whose
// first LIST answered "0" would hide a client that watches from "0" and silently gets a replay.
//
// Stored objects are frozen and shared (no copy on the way out): an object handed to create() or
// update() is frozen in place, so mutating it afterwards throws instead of corrupting the store.
import { randomUUID } from 'node:crypto';
import { RESOURCES, type KubeObject, type ResourceName } from './resources.js';
import { SortedKeys } from './sorted-keys.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: EventType;
  readonly resource: ResourceName;
  readonly rv: number;
  readonly object: KubeObject;
  /** The state before this event (MODIFIED only): a label-selected watch needs it to see objects leave. */
  readonly previous?: KubeObject;
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
  /** The version of the empty store (default 1000); the first object gets the next one. */
  initialResourceVersion?: number;
  /**
   * Events kept for watches to resume from (default: all until compact()). Beyond it the oldest are
   * compacted away, as the real API's watch cache and etcd compaction do; long runs set it to bound memory.
   */
  historyLimit?: number;
}

export const INITIAL_RESOURCE_VERSION = 1000;

export class KubeStore {
  private rv: number;
  private compacted: number;
  private readonly objects = new Map<ResourceName, Map<string, KubeObject>>();
  private readonly keys = new Map<ResourceName, SortedKeys>();
  /** Ascending by rv; every event after `compacted`. */
  private log: StoreEvent[] = [];
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  private readonly now: () => Date;
  private readonly historyLimit: number;

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.rv = options.initialResourceVersion ?? INITIAL_RESOURCE_VERSION;
    // Nothing before the first version can be watched from: its history does not exist.
    this.compacted = this.rv;
    this.historyLimit = options.historyLimit ?? Infinity;
    for (const name of Object.keys(RESOURCES) as ResourceName[]) {
      this.objects.set(name, new Map());
      this.keys.set(name, new SortedKeys());
    }
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Versions strictly below this one can no longer be watched or continued from. */
  get compactedVersion(): number {
    return this.compacted;
  }

  /** Objects of a resource (for callers sizing their work; O(1)). */
  count(resource: ResourceName): number {
    return this.table(resource).size;
  }

  create(resource: ResourceName, object: KubeObject): KubeObject {
    const key = keyOf(object.metadata);
    if (this.table(resource).has(key)) throw new StoreError('AlreadyExists', `Cannot create ${resource} "${key}": it already exists`);
    return this.commit('ADDED', resource, this.withCreateMetadata(object));
  }

  /**
   * Bulk load: the end state of create() for each object followed by compact(), without keeping an
   * event per object. Each object gets its own resourceVersion, and the history before the seed is
   * gone, so a watch or continue token from before it gets 410, as after an etcd compaction. Watches
   * open on the store still get an ADDED per object. Every object is checked before any is stored.
   */
  seed(resource: ResourceName, objects: readonly KubeObject[]): void {
    const table = this.table(resource);
    const seen = new Set<string>();
    for (const object of objects) {
      this.checkNamespace(resource, object);
      const key = keyOf(object.metadata);
      if (table.has(key) || seen.has(key)) throw new StoreError('AlreadyExists', `Cannot seed ${resource} "${key}": it already exists`);
      seen.add(key);
    }
    const keys = this.sortedKeys(resource);
    for (const object of objects) {
      const stored = this.freezeVersion(resource, this.withCreateMetadata(object));
      const key = keyOf(stored.metadata);
      table.set(key, stored);
      keys.insert(key);
      if (this.listeners.size > 0) this.notify(Object.freeze({ type: 'ADDED', resource, rv: this.rv, object: stored }));
    }
    this.compact();
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

  /** The stored (frozen) object, or undefined. */
  get(resource: ResourceName, key: ObjectKey): KubeObject | undefined {
    return this.table(resource).get(keyOf(key));
  }

  /** Current objects sorted by namespace/name, the order etcd keys (and so LIST chunks) come in. */
  list(resource: ResourceName, namespace?: string): KubeObject[] {
    return this.page(resource, { namespace }).items;
  }

  /**
   * One LIST chunk: up to `limit` matching objects with a key after `after`. The start is a binary
   * search, a namespace's keys are one contiguous range (the prefix "namespace/"), and the walk stops
   * one match past the limit, so paging 100k pods is linear overall. `remaining` is exact only without
   * namespace or selector (the real API likewise omits remainingItemCount for selected lists).
   */
  page(resource: ResourceName, query: PageQuery): { items: KubeObject[]; more: boolean; remaining?: number } {
    const table = this.table(resource);
    const sorted = this.sortedKeys(resource);
    const keys = sorted.view();
    const prefix = query.namespace === undefined ? undefined : `${query.namespace}/`;
    let start = sorted.after(query.after);
    if (prefix !== undefined) start = Math.max(start, sorted.atOrAfter(prefix));
    const limit = query.limit ?? Infinity;
    const items: KubeObject[] = [];
    for (let i = start; i < keys.length; i++) {
      const key = keys[i] as string;
      if (prefix !== undefined && !key.startsWith(prefix)) break;
      const object = table.get(key);
      if (object === undefined) continue;
      if (query.matches !== undefined && !query.matches(object)) continue;
      if (items.length === limit) {
        const filtered = prefix !== undefined || query.matches !== undefined;
        return { items, more: true, ...(filtered ? {} : { remaining: keys.length - i }) };
      }
      items.push(object);
    }
    return { items, more: false };
  }

  /** Events after `rv` (exclusive), or 'expired' when the log no longer reaches back that far. */
  eventsSince(rv: number): readonly StoreEvent[] | 'expired' {
    if (rv < this.compacted) return 'expired';
    return this.log.slice(firstAfter(this.log, rv));
  }

  /** Live events, delivered synchronously after each commit; returns the unsubscribe function. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the event log up to `rv` (default: now), like an etcd compaction. */
  compact(rv: number = this.rv): void {
    this.compacted = Math.max(this.compacted, Math.min(rv, this.rv));
    this.log = this.log.slice(firstAfter(this.log, this.compacted));
  }

  private withCreateMetadata(object: KubeObject): KubeObject {
    return { ...object, metadata: { uid: randomUUID(), creationTimestamp: this.now().toISOString(), ...object.metadata } };
  }

  private checkNamespace(resource: ResourceName, object: KubeObject): void {
    const info = RESOURCES[resource];
    if (info.namespaced !== (object.metadata.namespace !== undefined)) {
      throw new StoreError('Invalid', `Cannot store ${resource} "${object.metadata.name}": namespace is ${info.namespaced ? 'required' : 'not allowed'}`);
    }
  }

  /** Takes the next resourceVersion and returns the object as stored: kind and apiVersion first, frozen. */
  private freezeVersion(resource: ResourceName, object: KubeObject): KubeObject {
    const info = RESOURCES[resource];
    this.rv += 1;
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = object;
    return deepFreeze({ apiVersion: info.apiVersion, kind: info.kind, ...rest, metadata: { ...object.metadata, resourceVersion: String(this.rv) } });
  }

  private commit(type: EventType, resource: ResourceName, object: KubeObject): KubeObject {
    this.checkNamespace(resource, object);
    const stored = this.freezeVersion(resource, object);
    const table = this.table(resource);
    const key = keyOf(stored.metadata);
    const previous = table.get(key);
    if (type === 'DELETED') {
      table.delete(key);
      this.sortedKeys(resource).remove(key);
    } else {
      table.set(key, stored);
      if (previous === undefined) this.sortedKeys(resource).insert(key);
    }
    const event: StoreEvent = Object.freeze({ type, resource, rv: this.rv, object: stored, ...(type === 'MODIFIED' && previous ? { previous } : {}) });
    this.log.push(event);
    // Dropped in chunks, so a bounded history costs O(1) per event.
    if (this.log.length > this.historyLimit + Math.max(1000, this.historyLimit / 4)) {
      this.compact((this.log[this.log.length - this.historyLimit - 1] as StoreEvent).rv);
    }
    this.notify(event);
    return stored;
  }

  private notify(event: StoreEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  private sortedKeys(resource: ResourceName): SortedKeys {
    const keys = this.keys.get(resource);
    if (keys === undefined) throw new StoreError('NotFound', `Unknown resource "${resource}"`);
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

/** Index of the first event with a version above `rv` (the log is sorted by version). */
function firstAfter(log: readonly StoreEvent[], rv: number): number {
  let lo = 0;
  let hi = log.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((log[mid] as StoreEvent).rv > rv) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Freezes a JSON-like value and everything in it; parts already frozen (shared with an older version) are skipped. */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  // Index and for-in loops: Object.values() would allocate an array per node, 3x slower on a pod.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  } else {
    for (const key in value) deepFreeze(value[key]);
  }
  return value;
}
