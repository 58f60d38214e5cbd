// When the indexer first saw the version of an object it holds. A relist or resync delivers every
// object again; the first-seen time must survive that, since it is the last fallback for a terminal
// time (mapping/pod-status.ts) and would otherwise move.
import type { Clock } from '../../domain/clock.js';
import type { ObjectMeta } from '../../k8s/objects/k8s-types.js';

/** Any Kubernetes object, as far as the label caches read it. */
export interface WithMetadata {
  metadata?: ObjectMeta;
}

/**
 * A cached record (facts/pod-facts.ts, facts/job-facts.ts): its version, and when that version was
 * first seen.
 */
export interface Versioned {
  readonly resourceVersion: string | undefined;
  observedAt: number;
}

/** Both carry the same non-empty resourceVersion: a resync or relist delivering an unchanged object. */
export function sameVersion(a: Versioned, b: Versioned): boolean {
  const version = b.resourceVersion;
  return version !== undefined && version !== '' && a.resourceVersion === version;
}

/** `object`, first seen now, or when `previous` was if it is the same version; returned for chaining. */
export function see<T extends Versioned>(previous: Versioned | undefined, object: T, clock: Clock): T {
  object.observedAt = previous !== undefined && sameVersion(previous, object) ? previous.observedAt : clock.now();
  return object;
}
