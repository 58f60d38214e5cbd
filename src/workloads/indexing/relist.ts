// After a (re)list the caches are rebuilt from the snapshot rather than patched: the watch may have
// missed any number of events (deletions included) while it was broken or the service was away.
// Unchanged objects keep the time they were first seen (see caches/seen.ts).
import type { Clock } from '../../domain/clock.js';
import type { JobFacts } from '../facts/job-facts.js';
import { JobPodCache, tombstone } from '../caches/job-pod-cache.js';
import type { PodFacts } from '../facts/pod-facts.js';
import { see } from '../caches/seen.js';

/** The Jobs of a relist by uid. */
export function jobsOfRelist(items: readonly JobFacts[], previous: ReadonlyMap<string, JobFacts>, clock: Clock): Map<string, JobFacts> {
  const jobs = new Map<string, JobFacts>();
  for (const job of items) if (job.uid !== '') jobs.set(job.uid, see(previous.get(job.uid), job, clock));
  return jobs;
}

export interface RelistedPods {
  /** Standalone pods that are workloads (request GPUs). */
  standalone: Map<string, PodFacts>;
  jobPods: JobPodCache;
  /** The uid of every pod in the snapshot. */
  present: Set<string>;
}

export interface PodRelistOptions {
  /** Whether a Job is known: the pods it had that vanished are kept as deleted. */
  isKnownJob(jobUid: string): boolean;
  /** Whether a pod may hold GPUs (absent: those it asks for, or DRA claims it names). */
  mayHoldGpus?(pod: PodFacts): boolean;
  clock: Clock;
}

type InScope = (object: { readonly namespace: string | undefined }) => boolean;

/** Everything, or the objects of one namespace: what a relist covers. */
export function scopeOf(namespace: string | undefined): InScope {
  return namespace === undefined ? () => true : (object) => object.namespace === namespace;
}

interface PodCaches {
  standalone: ReadonlyMap<string, PodFacts>;
  jobPods: JobPodCache;
}

/** The cached pods a namespaced relist covers. */
export function withinScope(caches: PodCaches, inScope: InScope): PodCaches {
  const standalone = new Map([...caches.standalone].filter(([, pod]) => inScope(pod)));
  const jobPods = new JobPodCache();
  for (const [jobUid, pods] of caches.jobPods.byJob()) {
    for (const [uid, pod] of pods) if (inScope(pod)) jobPods.set(jobUid, uid, pod);
  }
  return { standalone, jobPods };
}

/** Puts the cached pods a namespaced relist did not cover back into its result, unchanged. */
export function keepOutOfScope(previous: PodCaches, relisted: RelistedPods, inScope: InScope): void {
  for (const [uid, pod] of previous.standalone) if (!inScope(pod)) relisted.standalone.set(uid, pod);
  for (const [jobUid, pods] of previous.jobPods.byJob()) {
    for (const [uid, pod] of pods) if (!inScope(pod)) relisted.jobPods.set(jobUid, uid, pod);
  }
}

/**
 * The pods of a relist, split into standalone workloads and Job pods. Pods that request no GPU are
 * no workloads and no part of one: only their uid is noted (present).
 */
export function podsOfRelist(items: readonly PodFacts[], previous: PodCaches, options: PodRelistOptions): RelistedPods {
  const now = options.clock.now();
  const relisted: RelistedPods = { standalone: new Map(), jobPods: new JobPodCache(), present: new Set() };
  for (const pod of items) {
    const uid = pod.uid;
    if (uid === '') continue;
    relisted.present.add(uid);
    if (!(options.mayHoldGpus?.(pod) ?? pod.mayHoldGpus)) continue;
    const jobUid = pod.jobUid;
    if (jobUid === null) relisted.standalone.set(uid, see(previous.standalone.get(uid), pod, options.clock));
    else relisted.jobPods.set(jobUid, uid, see(previous.jobPods.get(jobUid, uid), pod, options.clock));
  }
  // Pods of known Jobs that vanished meanwhile stay as deleted: the Job keeps their GPU time.
  for (const [jobUid, pods] of previous.jobPods.byJob()) {
    if (!options.isKnownJob(jobUid)) continue;
    for (const [uid, pod] of pods) if (!relisted.present.has(uid)) relisted.jobPods.set(jobUid, uid, tombstone(pod, now));
  }
  return relisted;
}
