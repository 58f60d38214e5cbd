// Pods that looked like no GPU pods, kept for a short while in a cluster that serves DRA. Where the API
// server drops a pod's claim fields, only a claim's reservedFor says that a pod holds GPUs, and the
// claim's watch event may come after the pod's last event for a while (two watches, no order between
// them): the pod is found here then. Bounded in time and count, so the CPU pods that are most of a
// cluster are not all kept.
import type { PodFacts } from '../facts/pod-facts.js';

export const RECENT_POD_MS = 60_000;
export const RECENT_POD_LIMIT = 10_000;

export class RecentPods {
  /** In the order they were put (a Map keeps insertion order), with when. */
  readonly #pods = new Map<string, { pod: PodFacts; at: number }>();
  readonly #keepMs: number;
  readonly #limit: number;

  constructor(options: { keepMs?: number; limit?: number } = {}) {
    this.#keepMs = options.keepMs ?? RECENT_POD_MS;
    this.#limit = options.limit ?? RECENT_POD_LIMIT;
  }

  put(pod: PodFacts, now: number): void {
    this.#pods.delete(pod.uid);
    this.#pods.set(pod.uid, { pod, at: now });
    for (const [uid, { at }] of this.#pods) {
      if (this.#pods.size <= this.#limit && at >= now - this.#keepMs) break;
      this.#pods.delete(uid);
    }
  }

  /** The pod last put under `uid`, if still kept; it is no longer kept here. */
  take(uid: string, now: number): PodFacts | undefined {
    const entry = this.#pods.get(uid);
    if (entry === undefined) return undefined;
    this.#pods.delete(uid);
    return entry.at >= now - this.#keepMs ? entry.pod : undefined;
  }

  forget(uid: string): void {
    this.#pods.delete(uid);
  }

  get size(): number {
    return this.#pods.size;
  }
}
