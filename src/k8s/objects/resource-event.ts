// The changes of a watched collection as the flows take them (workloads, telemetry, capacity, the
// writer election), owned by no flow so that none imports another for them: the Reflector's events
// (src/k8s/reflector.ts) fit ResourceEvent.

/**
 * One change of a watched collection: the full list after a (re)list, or one object's change. A
 * LIST may come page by page: PAGE events, then a SYNC with `paged` whose snapshot is those pages
 * (snapshot-pages.ts gathers them).
 */
export type ResourceEvent<T> =
  /** `namespace`: the snapshot covers that namespace only (namespaced watches); objects elsewhere are untouched. */
  | { type: 'SYNC'; items: readonly T[]; resourceVersion?: string; namespace?: string; paged?: boolean }
  | { type: 'PAGE'; items: readonly T[]; first: boolean; namespace?: string }
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T; resourceVersion?: string };

/** A change, or a snapshot whole: what the caches take once a LIST's pages are gathered. */
export type WholeEvent<T> = Exclude<ResourceEvent<T>, { type: 'PAGE' }>;
