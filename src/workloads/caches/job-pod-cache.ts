// The pods owned by Jobs, by Job uid then pod uid. A Job's row is derived from its pods (start, GPU
// time, exit code, node), so they are kept for as long as the Job is known, and even before it is:
// a pod is often delivered before its Job.
import { toKubeTime } from '../facts/kube-time.js';
import type { PodFacts } from '../facts/pod-facts.js';

export class JobPodCache {
  readonly #byJob = new Map<string, Map<string, PodFacts>>();

  get(jobUid: string, podUid: string): PodFacts | undefined {
    return this.#byJob.get(jobUid)?.get(podUid);
  }

  set(jobUid: string, podUid: string, pod: PodFacts): void {
    let pods = this.#byJob.get(jobUid);
    if (pods === undefined) this.#byJob.set(jobUid, (pods = new Map()));
    pods.set(podUid, pod);
  }

  delete(jobUid: string, podUid: string): void {
    const pods = this.#byJob.get(jobUid);
    pods?.delete(podUid);
    if (pods?.size === 0) this.#byJob.delete(jobUid);
  }

  deleteJob(jobUid: string): void {
    this.#byJob.delete(jobUid);
  }

  /** The cached pods of one Job. */
  podsOf(jobUid: string): PodFacts[] {
    return [...(this.#byJob.get(jobUid)?.values() ?? [])];
  }

  /** Every Job uid with cached pods, and its pods by pod uid. */
  byJob(): IterableIterator<[string, ReadonlyMap<string, PodFacts>]> {
    return this.#byJob.entries();
  }
}

/**
 * A pod of a known Job that was deleted (a delete event, or absent from a relist): kept with a
 * deletion time, so that the Job keeps its GPU time and exit code and the pod's interval ends
 * (podState treats it as deleted at `at` if it was still running). It keeps when it was first seen.
 */
export function tombstone(pod: PodFacts, at: number): PodFacts {
  const kept = pod.deletedAt(toKubeTime(at));
  kept.observedAt = pod.observedAt;
  return kept;
}
