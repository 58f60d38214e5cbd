// What the indexer keeps of an object it was delivered: the object, and when this version of it was
// first seen. A relist or resync delivers every object again; the first-seen time must survive that,
// since it is the last fallback for a terminal time (pod-status.ts) and would otherwise move.
import type { Clock } from '../domain/clock.js';
import type { ObjectMeta } from './k8s-types.js';

/** Any Kubernetes object, as far as the caches read it. */
export interface WithMetadata {
  metadata?: ObjectMeta;
}

/** A cached object and when the service first saw this version of it. */
export interface Seen<T> {
  object: T;
  observedAt: number;
}

/** Both carry the same non-empty resourceVersion: a resync or relist delivering an unchanged object. */
export function sameVersion(a: WithMetadata, b: WithMetadata): boolean {
  const version = b.metadata?.resourceVersion;
  return version !== undefined && version !== '' && a.metadata?.resourceVersion === version;
}

/** The cache entry for `object`: a known version keeps the time it was first seen, a new one is seen now. */
export function see<T extends WithMetadata>(previous: Seen<T> | undefined, object: T, clock: Clock): Seen<T> {
  if (previous !== undefined && sameVersion(previous.object, object)) return { object, observedAt: previous.observedAt };
  return { object, observedAt: clock.now() };
}
