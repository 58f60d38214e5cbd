// The workload index of one cluster: Namespace, Node, Job and Pod events in, rows and GPU intervals
// out, written in micro-batches by flush(). It caches the few objects a mapping needs (the labels of
// Namespaces and Nodes, Jobs and their pods, standalone GPU pods), so that a change of any of them
// re-maps the workloads it affects. Objects are cached as the events deliver them (managedFields are
// dropped upstream by the Reflector).
import type { Clock } from '../domain/clock.js';
import { isTerminal, type WorkloadKind } from '../domain/workload.js';
import type { Job, ObjectMeta, Pod } from './k8s-types.js';
import { firstPodNodeName, mapJob } from './map-job.js';
import { mapPod, podInterval } from './map-pod.js';
import { DEFAULT_GPU_RESOURCES, DEFAULT_LABEL_KEYS, type LabelKeys, type MappingContext } from './mapping-context.js';
import type { MappedWorkload } from './mapped-workload.js';
import { jobOwnerUid } from './owner.js';
import type { IndexerLogger, ResourceEvent, WorkloadSink } from './workload-sink.js';
import { WriteBatch } from './write-batch.js';

export interface WorkloadIndexerOptions {
  clusterId: string;
  clusterOrganizationId?: string;
  defaultOrganizationId: string;
  keys?: Readonly<LabelKeys>;
  gpuResources?: readonly string[];
  clock: Clock;
  logger: IndexerLogger;
}

export interface IndexerStats {
  /** Events handled, SYNC snapshots included (one each). */
  events: number;
  /** Flushes that wrote something. */
  flushes: number;
  /** Rows and intervals handed to the sink, and how many of them it changed. */
  rowsFlushed: number;
  rowsWritten: number;
  intervalsFlushed: number;
  intervalsWritten: number;
  /** Unfinished rows found missing after a relist and made cancelled. */
  cancelledByReconcile: number;
}

interface Labelled {
  metadata?: ObjectMeta;
}

/** A cached object and when the service first saw this version of it (a terminal time's last fallback). */
interface Seen<T> {
  object: T;
  observedAt: number;
}

const labelsKey = (object: Labelled | undefined): string =>
  JSON.stringify(Object.entries(object?.metadata?.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * A pod of a known Job that was deleted: kept with a deletion time, so that the Job keeps its GPU
 * time and exit code and its interval ends (podState treats it as deleted at `at` if still running).
 */
function tombstone(pod: Pod, at: number): Pod {
  if (pod.metadata?.deletionTimestamp !== undefined) return pod;
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date(at).toISOString(), deletionGracePeriodSeconds: 0 } };
}

export class WorkloadIndexer {
  readonly #sink: WorkloadSink;
  readonly #options: WorkloadIndexerOptions;
  readonly #keys: Readonly<LabelKeys>;
  readonly #gpuResources: readonly string[];
  readonly #batch = new WriteBatch();
  // Deleted Namespaces and Nodes stay cached: the objects in or on them are deleted right after and
  // must keep their attribution (organization, initiative, instance type) in history.
  readonly #namespaces = new Map<string, Labelled>();
  readonly #nodes = new Map<string, Labelled>();
  #jobs = new Map<string, Seen<Job>>();
  /** Pods owned by a Job, by Job uid then pod uid; kept even before their Job is seen. */
  #jobPods = new Map<string, Map<string, Seen<Pod>>>();
  /** Standalone pods that request GPUs. */
  #pods = new Map<string, Seen<Pod>>();
  readonly #stats: IndexerStats = {
    events: 0, flushes: 0, rowsFlushed: 0, rowsWritten: 0, intervalsFlushed: 0, intervalsWritten: 0, cancelledByReconcile: 0,
  };

  constructor(sink: WorkloadSink, options: WorkloadIndexerOptions) {
    this.#sink = sink;
    this.#options = options;
    this.#keys = options.keys ?? DEFAULT_LABEL_KEYS;
    this.#gpuResources = options.gpuResources ?? DEFAULT_GPU_RESOURCES;
  }

  onNamespaceEvent(event: ResourceEvent<Labelled>): void {
    this.#stats.events += 1;
    const changed = this.#putLabelled(this.#namespaces, event);
    if (changed.size === 0) return;
    this.#remapWhere(
      (job) => changed.has(job.metadata?.namespace ?? ''),
      (pod) => changed.has(pod.metadata?.namespace ?? ''),
    );
  }

  onNodeEvent(event: ResourceEvent<Labelled>): void {
    this.#stats.events += 1;
    const changed = this.#putLabelled(this.#nodes, event);
    if (changed.size === 0) return;
    this.#remapWhere(
      (_job, pods) => changed.has(firstPodNodeName(pods) ?? ''),
      (pod) => changed.has(pod.spec?.nodeName ?? ''),
    );
  }

  onJobEvent(event: ResourceEvent<Job>): void {
    this.#stats.events += 1;
    if (event.type === 'SYNC') return this.#syncJobs(event.items);
    const uid = event.object.metadata?.uid ?? '';
    if (uid === '') return;
    const previous = this.#jobs.get(uid);
    if (event.type === 'DELETED') return this.#deleteJob(uid, event.object, previous);
    if (previous !== undefined && sameVersion(previous.object, event.object)) return;
    this.#jobs.set(uid, this.#see(previous, event.object));
    this.#queueJob(uid);
  }

  onPodEvent(event: ResourceEvent<Pod>): void {
    this.#stats.events += 1;
    if (event.type === 'SYNC') return this.#syncPods(event.items);
    const pod = event.object;
    const uid = pod.metadata?.uid ?? '';
    if (uid === '') return;
    const jobUid = jobOwnerUid(pod.metadata);
    if (jobUid !== null) return this.#onJobPod(event.type, jobUid, uid, pod);
    const previous = this.#pods.get(uid);
    if (event.type === 'DELETED') {
      this.#pods.delete(uid);
      // A pod that had finished keeps its row as it is (history); an unfinished one is cancelled.
      if (previous !== undefined && this.#isFinished(this.#mapStandalone(previous))) return;
      this.#queue(this.#mapStandalone(this.#see(previous, pod), { at: this.#options.clock.now() }));
      return;
    }
    if (previous !== undefined && sameVersion(previous.object, pod)) return;
    const seen = this.#see(previous, pod);
    const mapped = this.#mapStandalone(seen);
    if (mapped === null) return; // no GPU: not a workload
    this.#pods.set(uid, seen);
    this.#queue(mapped);
  }

  /** Writes the queued rows, then the intervals (the store skips intervals of rows it lacks). */
  flush(): { rows: number; intervals: number } {
    if (this.#batch.size === 0) return { rows: 0, intervals: 0 };
    const contents = this.#batch.take();
    let rows: number;
    let intervals: number;
    try {
      rows = this.#sink.upsertWorkloads(contents.rows);
      intervals = this.#sink.upsertPodIntervals(contents.intervals);
    } catch (error) {
      this.#batch.restore(contents); // retried by the next flush; upserts are idempotent
      throw error;
    }
    const stats = this.#stats;
    stats.flushes += 1;
    stats.rowsFlushed += contents.rows.length;
    stats.rowsWritten += rows;
    stats.intervalsFlushed += contents.intervals.length;
    stats.intervalsWritten += intervals;
    this.#options.logger.debug({ clusterId: this.#options.clusterId, rows, intervals }, 'Workload batch written');
    return { rows, intervals };
  }

  /** Rows and intervals waiting for the next flush. */
  get pending(): number {
    return this.#batch.size;
  }

  stats(): IndexerStats {
    return { ...this.#stats };
  }

  #onJobPod(type: 'ADDED' | 'MODIFIED' | 'DELETED', jobUid: string, uid: string, pod: Pod): void {
    const pods = this.#jobPods.get(jobUid) ?? new Map<string, Seen<Pod>>();
    this.#jobPods.set(jobUid, pods);
    const previous = pods.get(uid);
    const jobKnown = this.#jobs.has(jobUid);
    if (type === 'DELETED') {
      const now = this.#options.clock.now();
      if (jobKnown) {
        pods.set(uid, { object: tombstone(pod, now), observedAt: previous?.observedAt ?? now });
        return this.#queueJob(jobUid);
      }
      pods.delete(uid);
      if (pods.size === 0) this.#jobPods.delete(jobUid);
      this.#batch.addInterval(podInterval(pod, { workloadId: jobUid, gpuResources: this.#gpuResources, deleted: { at: now } }));
      return;
    }
    if (previous !== undefined && sameVersion(previous.object, pod)) return;
    const seen = this.#see(previous, pod);
    pods.set(uid, seen);
    if (jobKnown) return this.#queueJob(jobUid);
    // The Job is not seen yet (or requests no GPU): the store keeps the interval only if its row exists.
    this.#batch.addInterval(podInterval(pod, { workloadId: jobUid, gpuResources: this.#gpuResources, observedAt: seen.observedAt }));
  }

  #deleteJob(uid: string, job: Job, previous: Seen<Job> | undefined): void {
    const finished = previous !== undefined && this.#isFinished(this.#mapJob(uid, previous));
    // A finished Job keeps its row as it is (history); an unfinished one is cancelled, its pods' intervals end.
    if (!finished) this.#queue(this.#mapJob(uid, this.#see(previous, job), { at: this.#options.clock.now() }));
    this.#jobs.delete(uid);
    this.#jobPods.delete(uid);
  }

  /** After a (re)list of Jobs: replace the cache, re-map all, cancel the unfinished rows it lacks. */
  #syncJobs(items: readonly Job[]): void {
    this.flush(); // so that listUnfinished sees every row queued so far
    const previous = this.#jobs;
    this.#jobs = new Map();
    for (const job of items) {
      const uid = job.metadata?.uid ?? '';
      if (uid !== '') this.#jobs.set(uid, this.#see(previous.get(uid), job));
    }
    this.#reconcile('Job', new Set(this.#jobs.keys()));
    for (const uid of previous.keys()) if (!this.#jobs.has(uid)) this.#jobPods.delete(uid);
    for (const uid of this.#jobs.keys()) this.#queueJob(uid);
  }

  /** After a (re)list of Pods: replace the caches, re-map all, cancel the unfinished Pod rows it lacks. */
  #syncPods(items: readonly Pod[]): void {
    this.flush();
    const now = this.#options.clock.now();
    const previousPods = this.#pods;
    const previousJobPods = this.#jobPods;
    this.#pods = new Map();
    this.#jobPods = new Map();
    const present = new Set<string>();
    for (const pod of items) {
      const uid = pod.metadata?.uid ?? '';
      if (uid === '') continue;
      present.add(uid);
      const jobUid = jobOwnerUid(pod.metadata);
      if (jobUid === null) {
        const seen = this.#see(previousPods.get(uid), pod);
        if (this.#mapStandalone(seen) !== null) this.#pods.set(uid, seen);
        continue;
      }
      const pods = this.#jobPods.get(jobUid) ?? new Map<string, Seen<Pod>>();
      pods.set(uid, this.#see(previousJobPods.get(jobUid)?.get(uid), pod));
      this.#jobPods.set(jobUid, pods);
    }
    // Pods of known Jobs that vanished meanwhile stay as deleted: the Job keeps their GPU time.
    for (const [jobUid, pods] of previousJobPods) {
      if (!this.#jobs.has(jobUid)) continue;
      for (const [uid, seen] of pods) {
        if (present.has(uid)) continue;
        const current = this.#jobPods.get(jobUid) ?? new Map<string, Seen<Pod>>();
        current.set(uid, { object: tombstone(seen.object, now), observedAt: seen.observedAt });
        this.#jobPods.set(jobUid, current);
      }
    }
    this.#reconcile('Pod', present);
    for (const uid of this.#jobs.keys()) this.#queueJob(uid);
    for (const seen of this.#pods.values()) this.#queue(this.#mapStandalone(seen));
    for (const [jobUid, pods] of this.#jobPods) {
      if (this.#jobs.has(jobUid)) continue;
      for (const seen of pods.values()) {
        this.#batch.addInterval(podInterval(seen.object, { workloadId: jobUid, gpuResources: this.#gpuResources, observedAt: seen.observedAt }));
      }
    }
  }

  /**
   * Unfinished rows of `kind` whose object is not in the snapshot vanished while the service was away
   * (or the watch was broken): cancelled now, their open intervals closed now (DECISIONS "Status and times").
   */
  #reconcile(kind: WorkloadKind, present: ReadonlySet<string>): void {
    const { clusterId, clock, logger } = this.#options;
    const now = clock.now();
    const vanished = this.#sink.listUnfinished(clusterId).filter((row) => row.kind === kind && !present.has(row.workloadId));
    for (const row of vanished) {
      this.#batch.addRow({ ...row, status: 'cancelled', completedAt: now, exitCode: row.exitCode ?? 0 });
      if (kind === 'Pod' && row.startedAt !== null) {
        this.#batch.addInterval({ podUid: row.workloadId, workloadId: row.workloadId, gpus: row.gpuCount, startedAt: row.startedAt, finishedAt: now });
      }
      // A Job's pods that this process has seen; intervals of pods it never saw stay as stored.
      for (const seen of this.#jobPods.get(row.workloadId)?.values() ?? []) {
        this.#batch.addInterval(podInterval(seen.object, { workloadId: row.workloadId, gpuResources: this.#gpuResources, deleted: { at: now } }));
      }
    }
    if (vanished.length === 0) return;
    this.#stats.cancelledByReconcile += vanished.length;
    logger.warn(
      { clusterId, kind, workloadIds: vanished.map((row) => row.workloadId) },
      `${vanished.length} unfinished workload(s) missing after a relist marked cancelled`,
    );
  }

  /** Caches Namespaces or Nodes by name; returns the names whose labels changed (or are new). */
  #putLabelled(cache: Map<string, Labelled>, event: ResourceEvent<Labelled>): Set<string> {
    const changed = new Set<string>();
    for (const object of event.type === 'SYNC' ? event.items : [event.object]) {
      const name = object.metadata?.name ?? '';
      if (name === '') continue;
      const previous = cache.get(name);
      cache.set(name, object);
      if (previous === undefined || labelsKey(previous) !== labelsKey(object)) changed.add(name);
    }
    return changed;
  }

  #remapWhere(jobAffected: (job: Job, pods: readonly Pod[]) => boolean, podAffected: (pod: Pod) => boolean): void {
    for (const [uid, seen] of this.#jobs) if (jobAffected(seen.object, this.#podsOf(uid))) this.#queueJob(uid);
    for (const seen of this.#pods.values()) if (podAffected(seen.object)) this.#queue(this.#mapStandalone(seen));
  }

  #queueJob(uid: string): void {
    const seen = this.#jobs.get(uid);
    if (seen !== undefined) this.#queue(this.#mapJob(uid, seen));
  }

  #queue(mapped: MappedWorkload | null): void {
    if (mapped === null) return;
    this.#batch.addRow(mapped.workload);
    for (const interval of mapped.intervals) this.#batch.addInterval(interval);
  }

  #podsOf(jobUid: string): Pod[] {
    return [...(this.#jobPods.get(jobUid)?.values() ?? [])].map((seen) => seen.object);
  }

  #mapJob(uid: string, seen: Seen<Job>, deleted?: { at: number }): MappedWorkload | null {
    const pods = this.#podsOf(uid);
    const context = this.#context(seen.object.metadata?.namespace, firstPodNodeName(pods), seen.observedAt, deleted);
    return mapJob(seen.object, { ...context, pods });
  }

  #mapStandalone(seen: Seen<Pod>, deleted?: { at: number }): MappedWorkload | null {
    const pod = seen.object;
    return mapPod(pod, this.#context(pod.metadata?.namespace, pod.spec?.nodeName, seen.observedAt, deleted));
  }

  #context(namespace: string | undefined, nodeName: string | null | undefined, observedAt: number, deleted?: { at: number }): MappingContext {
    const { clusterId, clusterOrganizationId, defaultOrganizationId } = this.#options;
    return {
      clusterId,
      clusterOrganizationId,
      defaultOrganizationId,
      namespace: namespace === undefined ? undefined : this.#namespaces.get(namespace),
      node: nodeName == null ? undefined : this.#nodes.get(nodeName),
      deleted,
      observedAt,
      keys: this.#keys,
      gpuResources: this.#gpuResources,
    };
  }

  #isFinished(mapped: MappedWorkload | null): boolean {
    return mapped !== null && isTerminal(mapped.workload.status);
  }

  /** The cached entry for `object`: a known version keeps the time it was first seen. */
  #see<T extends Labelled>(previous: Seen<T> | undefined, object: T): Seen<T> {
    if (previous !== undefined && sameVersion(previous.object, object)) return { object, observedAt: previous.observedAt };
    return { object, observedAt: this.#options.clock.now() };
  }
}

/** Both carry the same non-empty resourceVersion: a resync or relist delivering an unchanged object. */
function sameVersion(a: Labelled, b: Labelled): boolean {
  const version = b.metadata?.resourceVersion;
  return version !== undefined && version !== '' && a.metadata?.resourceVersion === version;
}
