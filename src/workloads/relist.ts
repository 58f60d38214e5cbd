// After a (re)list the caches are rebuilt from the snapshot rather than patched: the watch may have
// missed any number of events (deletions included) while it was broken or the service was away.
// Unchanged objects keep the time they were first seen (see seen.ts).
import type { Clock } from '../domain/clock.js';
import { JobPodCache, tombstone } from './job-pod-cache.js';
import type { Job, Pod } from './k8s-types.js';
import { jobOwnerUid } from './owner.js';
import { see, type Seen } from './seen.js';

/** The Jobs of a relist by uid. */
export function jobsOfRelist(items: readonly Job[], previous: ReadonlyMap<string, Seen<Job>>, clock: Clock): Map<string, Seen<Job>> {
  const jobs = new Map<string, Seen<Job>>();
  for (const job of items) {
    const uid = job.metadata?.uid ?? '';
    if (uid !== '') jobs.set(uid, see(previous.get(uid), job, clock));
  }
  return jobs;
}

export interface RelistedPods {
  /** Standalone pods that are workloads (request GPUs). */
  standalone: Map<string, Seen<Pod>>;
  jobPods: JobPodCache;
  /** The uid of every pod in the snapshot. */
  present: Set<string>;
}

export interface PodRelistOptions {
  /** Whether a standalone pod is a workload (requests GPUs). */
  isWorkload(seen: Seen<Pod>): boolean;
  /** Whether a Job's pod is worth caching (it requests GPUs). */
  isJobPodOfInterest(pod: Pod): boolean;
  /** Whether a Job is known: the pods it had that vanished are kept as deleted. */
  isKnownJob(jobUid: string): boolean;
  clock: Clock;
}

type InScope = (object: { metadata?: { namespace?: string } }) => boolean;

/** Everything, or the objects of one namespace: what a relist covers. */
export function scopeOf(namespace: string | undefined): InScope {
  return namespace === undefined ? () => true : (object) => object.metadata?.namespace === namespace;
}

interface PodCaches {
  standalone: ReadonlyMap<string, Seen<Pod>>;
  jobPods: JobPodCache;
}

/** The cached pods a namespaced relist covers. */
export function withinScope(caches: PodCaches, inScope: InScope): PodCaches {
  const standalone = new Map([...caches.standalone].filter(([, seen]) => inScope(seen.object)));
  const jobPods = new JobPodCache();
  for (const [jobUid, pods] of caches.jobPods.byJob()) {
    for (const [uid, seen] of pods) if (inScope(seen.object)) jobPods.set(jobUid, uid, seen);
  }
  return { standalone, jobPods };
}

/** Puts the cached pods a namespaced relist did not cover back into its result, unchanged. */
export function keepOutOfScope(previous: PodCaches, relisted: RelistedPods, inScope: InScope): void {
  for (const [uid, seen] of previous.standalone) if (!inScope(seen.object)) relisted.standalone.set(uid, seen);
  for (const [jobUid, pods] of previous.jobPods.byJob()) {
    for (const [uid, seen] of pods) if (!inScope(seen.object)) relisted.jobPods.set(jobUid, uid, seen);
  }
}

/** The pods of a relist, split into standalone workloads and Job pods. */
export function podsOfRelist(
  items: readonly Pod[],
  previous: { standalone: ReadonlyMap<string, Seen<Pod>>; jobPods: JobPodCache },
  options: PodRelistOptions,
): RelistedPods {
  const now = options.clock.now();
  const relisted: RelistedPods = { standalone: new Map(), jobPods: new JobPodCache(), present: new Set() };
  for (const pod of items) {
    const uid = pod.metadata?.uid ?? '';
    if (uid === '') continue;
    relisted.present.add(uid);
    const jobUid = jobOwnerUid(pod.metadata);
    if (jobUid === null) {
      const seen = see(previous.standalone.get(uid), pod, options.clock);
      if (options.isWorkload(seen)) relisted.standalone.set(uid, seen);
      continue;
    }
    if (options.isJobPodOfInterest(pod)) relisted.jobPods.set(jobUid, uid, see(previous.jobPods.get(jobUid, uid), pod, options.clock));
  }
  // Pods of known Jobs that vanished meanwhile stay as deleted: the Job keeps their GPU time.
  for (const [jobUid, pods] of previous.jobPods.byJob()) {
    if (!options.isKnownJob(jobUid)) continue;
    for (const [uid, seen] of pods) {
      if (!relisted.present.has(uid)) relisted.jobPods.set(jobUid, uid, { object: tombstone(seen.object, now), observedAt: seen.observedAt });
    }
  }
  return relisted;
}
