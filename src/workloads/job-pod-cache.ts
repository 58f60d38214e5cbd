// The pods owned by Jobs, by Job uid then pod uid. A Job's row is derived from its pods (start, GPU
// time, exit code, node), so they are kept for as long as the Job is known, and even before it is:
// a pod is often delivered before its Job.
import type { Pod } from './k8s-types.js';
import type { Seen } from './seen.js';

export class JobPodCache {
  readonly #byJob = new Map<string, Map<string, Seen<Pod>>>();

  get(jobUid: string, podUid: string): Seen<Pod> | undefined {
    return this.#byJob.get(jobUid)?.get(podUid);
  }

  set(jobUid: string, podUid: string, seen: Seen<Pod>): void {
    const pods = this.#byJob.get(jobUid) ?? new Map<string, Seen<Pod>>();
    pods.set(podUid, seen);
    this.#byJob.set(jobUid, pods);
  }

  delete(jobUid: string, podUid: string): void {
    const pods = this.#byJob.get(jobUid);
    pods?.delete(podUid);
    if (pods?.size === 0) this.#byJob.delete(jobUid);
  }

  deleteJob(jobUid: string): void {
    this.#byJob.delete(jobUid);
  }

  /** The cached pods of one Job, each with when it was first seen. */
  seenOf(jobUid: string): Seen<Pod>[] {
    return [...(this.#byJob.get(jobUid)?.values() ?? [])];
  }

  podsOf(jobUid: string): Pod[] {
    return this.seenOf(jobUid).map((seen) => seen.object);
  }

  /** Every Job uid with cached pods, and its pods by pod uid. */
  byJob(): IterableIterator<[string, ReadonlyMap<string, Seen<Pod>>]> {
    return this.#byJob.entries();
  }
}

/**
 * A pod of a known Job that was deleted (a delete event, or absent from a relist): kept with a
 * deletion time, so that the Job keeps its GPU time and exit code and the pod's interval ends
 * (podState treats it as deleted at `at` if it was still running).
 */
export function tombstone(pod: Pod, at: number): Pod {
  if (pod.metadata?.deletionTimestamp !== undefined) return pod;
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date(at).toISOString(), deletionGracePeriodSeconds: 0 } };
}
