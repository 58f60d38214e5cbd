// The workload index of one cluster: Namespace, Node, Job and Pod events in, rows and GPU intervals
// out, written in micro-batches by writeStep() (flush() writes them all at once). Events are routed
// here; each kind of object has its cache (caches/label-cache.ts, caches/job-pod-cache.ts, the Jobs
// and standalone pods below), so that a change of any of them re-maps the workloads it affects
// (mapping/workload-mapper.ts). A relist rebuilds the caches (relist.ts) and cancels what vanished
// meanwhile (reconcile.ts). Pods and Jobs are cached as flat records of what the mappers read
// (facts/facts-projection.ts), Namespaces and Nodes as slim copies of their metadata.
import type { GpuCounting } from '../mapping/pod-shares.js';
import type { Clock } from '../../domain/clock.js';
import { isTerminal, type PodGpuInterval, type WorkloadKind } from '../../domain/workload.js';
import { FactsProjection } from '../facts/facts-projection.js';
import type { JobFacts } from '../facts/job-facts.js';
import { JobPodCache, tombstone } from '../caches/job-pod-cache.js';
import type { Job, Pod } from '../../k8s/objects/k8s-types.js';
import { LabelCache } from '../caches/label-cache.js';
import { firstPodNodeName } from '../mapping/map-job.js';
import type { NamespaceInitiatives } from '../../domain/namespace-initiatives.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from '../attribution/label-keys.js';
import type { InitiativeSource } from '../attribution/initiative-source.js';
import { DEFAULT_GPU_RESOURCES } from '../../k8s/objects/gpu-request.js';
import type { MappedWorkload } from '../mapping/mapped-workload.js';
import type { IntervalObserver } from '../../domain/interval-observer.js';
import type { PodFacts } from '../facts/pod-facts.js';
import { cancelVanished } from './reconcile.js';
import { jobsOfRelist, keepOutOfScope, podsOfRelist, scopeOf, withinScope } from './relist.js';
import { sameVersion, see, type Versioned, type WithMetadata } from '../caches/seen.js';
import { WorkloadMapper } from '../mapping/workload-mapper.js';
import { SnapshotPages } from '../../k8s/objects/snapshot-pages.js';
import type { IndexerLogger, WorkloadSink } from '../workload-sink.js';
import type { ResourceEvent, WholeEvent } from '../../k8s/objects/resource-event.js';
import { StagedWrite } from './staged-write.js';
import { WriteBatch } from './write-batch.js';
import { contextSlimmer } from '../caches/slim.js';
import { DraCache, type DraChange } from '../caches/dra-cache.js';
import { RecentPods } from '../caches/recent-pods.js';
import type { DeviceClass, ResourceClaim, ResourceSlice } from '../../k8s/objects/dra-types.js';

/**
 * How long a standby keeps the finishes it saw. A live writer writes them within its flush interval;
 * a dead one is replaced within about ha_lease_seconds + ha_retry_seconds (docs/scaling.md). The
 * margin covers a database outage of several minutes, during which no replica writes.
 */
const STANDBY_MEMORY_MS = 15 * 60_000;

export interface WorkloadIndexerOptions {
  clusterId: string;
  clusterOrganizationId?: string;
  defaultOrganizationId: string;
  keys?: Readonly<LabelKeys>;
  /** Who decides the initiative (absent: `labels`). */
  initiativeSource?: InitiativeSource;
  gpuResources?: readonly string[];
  /** KAI Scheduler's reservation namespace, whose pods are no workloads (absent or null: none). */
  reservationNamespace?: string | null;
  /** How GPUs are counted (absent: every device whole, as rows before shares). */
  counting?: GpuCounting;
  /** The capacity budgets' namespace → initiative mapping (absent: none). */
  namespaceInitiatives?: NamespaceInitiatives;
  /** Told of every pod interval queued, with the pod's node (the fleet's allocations; absent: nobody). */
  intervals?: IntervalObserver;
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
  /** Open pod intervals of those rows that the store closed. */
  intervalsClosedByReconcile: number;
}

export class WorkloadIndexer {
  /** Where rows go; null while another replica writes this cluster (standby): caches stay warm, nothing is written. */
  #sink: WorkloadSink | null;
  /**
   * While standing by: the last state of each workload seen to finish, with when. The writer may die
   * before writing it, and the object may be gone from the caches by the takeover (a finished Job or
   * pod deleted): the new writer writes these first, so the finish is not lost or made a cancel.
   */
  readonly #finishedWhileStandby = new Map<string, { mapped: MappedWorkload; at: number }>();
  /** The scopes a LIST of Jobs and of Pods has covered: the whole cluster (null) or namespaces. */
  readonly #listed = { jobs: new Set<string | null>(), pods: new Set<string | null>() };
  readonly #options: WorkloadIndexerOptions;
  readonly #batch: WriteBatch;
  /** The batch being written in steps, if any, and how many snapshots (SYNCs) it holds the result of. */
  #staged: StagedWrite | null = null;
  /** The write step in progress, if any: the next one waits for it. */
  #writing: Promise<unknown> = Promise.resolve();
  #stagedSyncs = 0;
  /** Snapshots received, and how many of them are fully written: readiness waits for the latter. */
  #syncsReceived = 0;
  #syncsWritten = 0;
  readonly #namespaces = new LabelCache();
  readonly #nodes = new LabelCache();
  /** DRA's slices, classes and claims, and what the pods' claims held. */
  readonly #dra: DraCache;
  /** Pods that looked like no GPU pods lately, for a claim reserved for them that comes after (recent-pods.ts). */
  readonly #recent = new RecentPods();
  readonly #mapper: WorkloadMapper;
  /** Jobs whose pods request GPUs. */
  #jobs = new Map<string, JobFacts>();
  #jobPods = new JobPodCache();
  /** Standalone pods that request GPUs. */
  #pods = new Map<string, PodFacts>();
  // What each kind keeps of a LIST, page by page: flat records of Pods and Jobs, slim Namespaces and Nodes.
  readonly #podPages: SnapshotPages<Pod, PodFacts>;
  readonly #jobPages: SnapshotPages<Job, JobFacts>;
  readonly #namespacePages: SnapshotPages<WithMetadata, WithMetadata>;
  readonly #nodePages: SnapshotPages<WithMetadata, WithMetadata>;
  readonly #claimPages = new SnapshotPages<ResourceClaim, ResourceClaim>((claim) => claim);
  readonly #slicePages = new SnapshotPages<ResourceSlice, ResourceSlice>((slice) => slice);
  readonly #classPages = new SnapshotPages<DeviceClass, DeviceClass>((deviceClass) => deviceClass);
  readonly #stats: IndexerStats = {
    events: 0, flushes: 0, rowsFlushed: 0, rowsWritten: 0, intervalsFlushed: 0, intervalsWritten: 0,
    cancelledByReconcile: 0, intervalsClosedByReconcile: 0,
  };

  /** `sink` null: start as a standby, until becomeWriter(). */
  constructor(sink: WorkloadSink | null, options: WorkloadIndexerOptions) {
    this.#sink = sink;
    this.#options = options;
    const observer = options.intervals;
    this.#batch = new WriteBatch(observer === undefined ? undefined : {
      interval: (interval) => observer.interval(interval, this.#nodeOf(interval)),
      closed: (workloadIds) => observer.closed(workloadIds),
    });
    const keys = options.keys ?? DEFAULT_LABEL_KEYS;
    const projection = new FactsProjection({
      keys,
      gpuResources: options.gpuResources ?? DEFAULT_GPU_RESOURCES,
      reservationNamespace: options.reservationNamespace ?? null,
    });
    const slimContext = contextSlimmer(keys);
    this.#podPages = new SnapshotPages((pod) => projection.pod(pod));
    this.#jobPages = new SnapshotPages((job) => projection.job(job));
    this.#namespacePages = new SnapshotPages(slimContext);
    this.#nodePages = new SnapshotPages(slimContext);
    this.#dra = new DraCache(options.counting?.settings);
    this.#mapper = new WorkloadMapper({ namespaces: this.#namespaces, nodes: this.#nodes, claims: this.#dra }, {
      clusterId: options.clusterId,
      clusterOrganizationId: options.clusterOrganizationId,
      defaultOrganizationId: options.defaultOrganizationId,
      keys: options.keys ?? DEFAULT_LABEL_KEYS,
      ...(options.initiativeSource === undefined ? {} : { initiativeSource: options.initiativeSource }),
      gpuResources: options.gpuResources ?? DEFAULT_GPU_RESOURCES,
      ...(options.namespaceInitiatives === undefined ? {} : { namespaceInitiatives: options.namespaceInitiatives }),
      ...(options.counting === undefined ? {} : { counting: options.counting }),
    });
  }

  onNamespaceEvent(received: ResourceEvent<WithMetadata>): void {
    const event = this.#whole(received, this.#namespacePages);
    if (event === undefined) return;
    const changed = this.#namespaces.apply(event);
    if (changed.size === 0) return;
    this.#remapWhere(
      (job) => changed.has(job.namespace ?? ''),
      (pod) => changed.has(pod.namespace ?? ''),
    );
  }

  /**
   * The capacity budgets' namespace mapping changed for these namespaces: the live workloads in them
   * are mapped again. Finished workloads no longer in the cluster keep the initiative they ran under.
   */
  remapNamespaces(namespaces: ReadonlySet<string>): void {
    if (namespaces.size === 0) return;
    this.#remapWhere(
      (job) => namespaces.has(job.namespace ?? ''),
      (pod) => namespaces.has(pod.namespace ?? ''),
    );
  }

  onNodeEvent(received: ResourceEvent<WithMetadata>): void {
    const event = this.#whole(received, this.#nodePages);
    if (event === undefined) return;
    const changed = this.#nodes.apply(event);
    if (changed.size === 0) return;
    this.#remapWhere(
      (_job, pods) => changed.has(firstPodNodeName(pods) ?? ''),
      (pod) => changed.has(pod.nodeName ?? ''),
    );
  }

  onClaimEvent(received: ResourceEvent<ResourceClaim>): void {
    const event = this.#whole(received, this.#claimPages);
    if (event !== undefined) this.#remapDra(this.#dra.onClaimEvent(event));
  }

  onSliceEvent(received: ResourceEvent<ResourceSlice>): void {
    const event = this.#whole(received, this.#slicePages);
    if (event !== undefined) this.#remapDra(this.#dra.onSliceEvent(event));
  }

  onDeviceClassEvent(received: ResourceEvent<DeviceClass>): void {
    const event = this.#whole(received, this.#classPages);
    if (event !== undefined) this.#remapDra(this.#dra.onClassEvent(event));
  }

  onJobEvent(received: ResourceEvent<Job>): void {
    const event = this.#whole(received, this.#jobPages);
    if (event === undefined) return;
    if (event.type === 'SYNC') {
      this.#listed.jobs.add(event.namespace ?? null);
      return this.#syncJobs(event.items, event.namespace);
    }
    const job = event.object;
    const uid = job.uid;
    if (uid === '') return;
    const previous = this.#jobs.get(uid);
    if (event.type === 'DELETED') return this.#deleteJob(uid, job, previous);
    if (previous !== undefined && sameVersion(previous, job)) return;
    if (!this.#mayBeWorkload(job)) return; // not a workload: nothing to keep
    this.#jobs.set(uid, this.#see(previous, job));
    this.#queueJob(uid);
  }

  onPodEvent(received: ResourceEvent<Pod>): void {
    const event = this.#whole(received, this.#podPages);
    if (event === undefined) return;
    if (event.type === 'SYNC') {
      this.#listed.pods.add(event.namespace ?? null);
      return this.#syncPods(event.items, event.namespace);
    }
    const pod = event.object;
    const uid = pod.uid;
    if (uid === '') return;
    if (pod.jobUid !== null) return this.#onJobPod(event.type, pod.jobUid, uid, pod);
    const previous = this.#pods.get(uid);
    if (event.type === 'DELETED') {
      this.#pods.delete(uid);
      // A pod that had finished keeps its row as it is (history); an unfinished one is cancelled.
      if (previous === undefined || !isFinished(this.#mapper.standalone(previous))) {
        this.#queue(this.#mapper.standalone(this.#see(previous, pod), { at: this.#options.clock.now() }));
      }
      this.#dra.forgetPod(pod);
      this.#recent.forget(uid);
      return;
    }
    if (previous !== undefined && sameVersion(previous, pod)) return;
    const seen = this.#see(previous, pod);
    this.#dra.notePod(seen);
    const mapped = this.#mapper.standalone(seen);
    // No GPU: not a workload, unless its claims hold some once they are allocated.
    if (mapped === null && !this.#dra.usesClaims(seen)) return this.#keepRecent(seen);
    this.#pods.set(uid, seen);
    this.#queue(mapped);
  }

  /**
   * Writes everything queued, in one go: the rows, then the intervals (the store skips intervals of
   * rows it lacks), then the closings of open intervals (last, so that no interval reopens one).
   * For tests and for letting go of a cluster; the service writes through writeStep() so that a large
   * batch never holds the event loop. What the sink changed is counted in stats(), not returned:
   * no caller needs it apart from the running totals there.
   */
  async flush(): Promise<void> {
    while (this.pending > 0) await this.writeStep(Infinity);
  }

  /**
   * Writes up to `budget` items of the batch being written, taking the queued batch when none is;
   * returns true once that batch is complete (events since then wait for the next call). A throw
   * leaves the batch where it was: the next call writes the same items again. Calls run one at a
   * time, in order: the flush loop and a cluster being let go may both write.
   */
  writeStep(budget: number): Promise<boolean> {
    const step = this.#writing.then(() => this.#writeStep(budget));
    this.#writing = step.catch(() => undefined);
    return step;
  }

  async #writeStep(budget: number): Promise<boolean> {
    const sink = this.#sink;
    if (sink === null) {
      // Standby: the writer of this cluster writes what these events led to.
      this.#batch.take();
      this.#staged = null;
      this.#syncsWritten = this.#syncsReceived;
      this.#forgetFinishedBefore(this.#options.clock.now() - STANDBY_MEMORY_MS);
      return true;
    }
    if (this.#staged === null) {
      if (this.#batch.size === 0) {
        this.#syncsWritten = this.#syncsReceived;
        return true;
      }
      this.#staged = new StagedWrite(this.#batch.take());
      this.#stagedSyncs = this.#syncsReceived;
    }
    const staged = this.#staged;
    await staged.step(sink, budget);
    if (!staged.done) return false;
    this.#staged = null;
    this.#syncsWritten = this.#stagedSyncs;
    const { contents, written } = staged;
    const stats = this.#stats;
    stats.flushes += 1;
    stats.rowsFlushed += contents.rows.length;
    stats.rowsWritten += written.rows;
    stats.intervalsFlushed += contents.intervals.length;
    stats.intervalsWritten += written.intervals;
    stats.intervalsClosedByReconcile += written.closed;
    this.#options.logger.debug({ clusterId: this.#options.clusterId, ...written }, 'Workload batch written');
    return true;
  }

  /** Whether this indexer writes its cluster (false: standby, another replica does). */
  get writing(): boolean {
    return this.#sink !== null;
  }

  /**
   * Stops writing: another replica holds this cluster's write lock, or this one lost it. What is
   * queued or half written is dropped (the writer writes it); the caches keep following the
   * informers, so that a takeover needs no LIST.
   */
  standby(): void {
    this.#sink = null;
    // What this replica had not written yet: its finished rows are kept, as if seen while standing by.
    const unwritten = { rows: [...(this.#staged?.unwrittenRows() ?? []), ...this.#batch.rows()], intervals: this.#batch.take().intervals };
    this.#staged = null;
    const now = this.#options.clock.now();
    for (const row of unwritten.rows) {
      if (!isTerminal(row.status)) continue;
      const intervals = unwritten.intervals.filter((interval) => interval.workloadId === row.workloadId);
      this.#finishedWhileStandby.set(row.workloadId, { mapped: { workload: row, intervals }, at: now });
    }
  }

  /**
   * Starts writing through `sink` (this replica took the cluster's write lock), and writes the whole
   * picture the caches hold, as a relist would: a writer that died may not have written its last
   * changes, and rows whose object vanished meanwhile are cancelled. Rows that did not change write
   * nothing. Without a LIST yet, the LIST to come does the reconciling.
   */
  becomeWriter(sink: WorkloadSink): void {
    this.#sink = sink;
    this.#batch.take();
    this.#staged = null;
    for (const { mapped } of this.#finishedWhileStandby.values()) this.#queue(mapped);
    this.#finishedWhileStandby.clear();
    this.resync();
  }

  /** Queues every cached workload again and cancels the unfinished rows the caches lack. */
  resync(): void {
    if (this.#sink === null) return;
    // Counted as a snapshot: the cluster is not indexed until what it queues is written.
    this.#syncsReceived += 1;
    this.#remapWhere(() => true, () => true);
    for (const [jobUid, pods] of this.#jobPods.byJob()) {
      if (this.#jobs.has(jobUid)) continue;
      for (const pod of pods.values()) {
        this.#batch.addInterval(this.#mapper.podInterval(pod, { workloadId: jobUid, observedAt: pod.observedAt }));
      }
    }
    const jobs = new Set(this.#jobs.keys());
    const pods = new Set(this.#pods.keys());
    for (const scope of this.#listed.jobs) this.#cancelVanished('Job', jobs, scope ?? undefined);
    for (const scope of this.#listed.pods) this.#cancelVanished('Pod', pods, scope ?? undefined);
  }

  /**
   * Everything every snapshot (LIST) so far led to is in the store: the index holds the picture the
   * informers have. Until then a reader would see part of a cluster.
   */
  get snapshotsWritten(): boolean {
    return this.#syncsWritten === this.#syncsReceived;
  }

  /** Rows, intervals and interval closings not written yet. */
  get pending(): number {
    return this.#batch.size + (this.#staged?.remaining ?? 0);
  }

  stats(): IndexerStats {
    return { ...this.#stats };
  }

  #onJobPod(type: 'ADDED' | 'MODIFIED' | 'DELETED', jobUid: string, uid: string, pod: PodFacts): void {
    // The pods of CPU Jobs are most pods of many clusters, and their Jobs are no workloads.
    if (!pod.mayHoldGpus && !this.#dra.usesClaims(pod)) {
      if (type === 'DELETED') this.#recent.forget(uid);
      else if (this.#dra.served) this.#keepRecent(this.#see(undefined, pod));
      return;
    }
    const previous = this.#jobPods.get(jobUid, uid);
    const jobKnown = this.#jobs.has(jobUid);
    if (type === 'DELETED') {
      const now = this.#options.clock.now();
      if (jobKnown) {
        pod.observedAt = previous?.observedAt ?? now;
        this.#jobPods.set(jobUid, uid, tombstone(pod, now));
        return this.#queueJob(jobUid);
      }
      this.#jobPods.delete(jobUid, uid);
      this.#batch.addInterval(this.#mapper.podInterval(pod, { workloadId: jobUid, deleted: { at: now } }));
      this.#dra.forgetPod(pod);
      return;
    }
    if (previous !== undefined && sameVersion(previous, pod)) return;
    const seen = this.#see(previous, pod);
    this.#dra.notePod(seen);
    this.#jobPods.set(jobUid, uid, seen);
    if (jobKnown) return this.#queueJob(jobUid);
    // The Job is not seen yet (or requests no GPU): the store keeps the interval only if its row exists.
    this.#batch.addInterval(this.#mapper.podInterval(pod, { workloadId: jobUid, observedAt: pod.observedAt }));
  }

  #deleteJob(uid: string, job: JobFacts, previous: JobFacts | undefined): void {
    const pods = this.#jobPods.podsOf(uid);
    const finished = previous !== undefined && isFinished(this.#mapper.job(previous, { pods }));
    // A finished Job keeps its row as it is (history); an unfinished one is cancelled, its pods' intervals end.
    if (!finished) this.#queue(this.#mapper.job(this.#see(previous, job), { pods, deleted: { at: this.#options.clock.now() } }));
    this.#jobs.delete(uid);
    for (const pod of pods) this.#dra.forgetPod(pod);
    this.#jobPods.deleteJob(uid);
  }

  /**
   * After a (re)list of Jobs (of one namespace when `namespace` is set): replace the cached Jobs it
   * covers, re-map them, cancel the unfinished rows it lacks.
   */
  #syncJobs(items: readonly JobFacts[], namespace?: string): void {
    const inScope = scopeOf(namespace);
    const previous = this.#jobs;
    this.#jobs = jobsOfRelist(items.filter((job) => this.#mayBeWorkload(job)), previous, this.#options.clock);
    for (const [uid, job] of previous) if (!inScope(job)) this.#jobs.set(uid, job);
    this.#cancelVanished('Job', new Set(this.#jobs.keys()), namespace);
    for (const uid of previous.keys()) if (!this.#jobs.has(uid)) this.#jobPods.deleteJob(uid);
    for (const [uid, job] of this.#jobs) if (inScope(job)) this.#queueJob(uid);
  }

  /**
   * After a (re)list of Pods (of one namespace when `namespace` is set): replace the cached pods it
   * covers, re-map their workloads, cancel the unfinished Pod rows it lacks.
   */
  #syncPods(items: readonly PodFacts[], namespace?: string): void {
    const inScope = scopeOf(namespace);
    const previous = { standalone: this.#pods, jobPods: this.#jobPods };
    const relisted = podsOfRelist(items, namespace === undefined ? previous : withinScope(previous, inScope), {
      isKnownJob: (jobUid) => this.#jobs.has(jobUid),
      mayHoldGpus: (pod) => pod.mayHoldGpus || this.#dra.usesClaims(pod),
      clock: this.#options.clock,
    });
    if (namespace !== undefined) keepOutOfScope(previous, relisted, inScope);
    this.#pods = relisted.standalone;
    this.#jobPods = relisted.jobPods;
    this.#noteDraPods();
    this.#cancelVanished('Pod', relisted.present, namespace);
    for (const [uid, job] of this.#jobs) if (inScope(job)) this.#queueJob(uid);
    for (const pod of this.#pods.values()) if (inScope(pod)) this.#queue(this.#mapper.standalone(pod));
    for (const [jobUid, pods] of this.#jobPods.byJob()) {
      if (this.#jobs.has(jobUid)) continue;
      for (const pod of pods.values()) {
        if (inScope(pod)) this.#batch.addInterval(this.#mapper.podInterval(pod, { workloadId: jobUid, observedAt: pod.observedAt }));
      }
    }
  }

  #cancelVanished(kind: WorkloadKind, present: ReadonlySet<string>, namespace: string | undefined): void {
    if (this.#sink === null) return; // the writer reconciles
    const { clusterId, clock, logger } = this.#options;
    // Rows not written yet count as known: the store lacks them, the relist must still judge them.
    const unwritten = [...(this.#staged?.unwrittenRows() ?? []), ...this.#batch.rows()];
    const options = {
      sink: this.#sink,
      unwritten,
      batch: this.#batch,
      jobPods: this.#jobPods,
      mapper: this.#mapper,
      clusterId,
      namespace,
      clock,
      logger,
    };
    this.#stats.cancelledByReconcile += cancelVanished(kind, present, options);
  }

  /**
   * Whether a Job may be a workload: its template asks for GPUs or names claims, or (in a cluster that
   * serves DRA) its pods may hold claims the template does not name, on an API server older than the
   * pod's claim fields. Such Jobs are kept, and make a row once a claim reserved for a pod holds GPUs.
   */
  #mayBeWorkload(job: JobFacts): boolean {
    return job.mayHoldGpus || this.#dra.served;
  }

  /** The node of an interval's pod, as cached (null once the pod is gone from the caches). */
  #nodeOf(interval: PodGpuInterval): string | null {
    const pod = this.#jobPods.get(interval.workloadId, interval.podUid) ?? this.#pods.get(interval.podUid);
    return pod?.nodeName ?? null;
  }

  /**
   * What the DRA caches keep follows the pods cached: pods relisted are noted, those gone forgotten;
   * the interval observer keeps only what the cached pods hold.
   */
  #noteDraPods(): void {
    const cached = new Set<string>();
    for (const pod of this.#pods.values()) {
      cached.add(pod.uid);
      this.#dra.notePod(pod);
    }
    for (const [, pods] of this.#jobPods.byJob()) {
      for (const pod of pods.values()) {
        cached.add(pod.uid);
        this.#dra.notePod(pod);
      }
    }
    this.#dra.retainPods(cached);
    this.#options.intervals?.retainPods(cached);
  }

  /** Keeps a pod that looks like no GPU pod for a while, where DRA is served: a claim may yet be reserved for it. */
  #keepRecent(pod: PodFacts): void {
    if (this.#dra.served) this.#recent.put(pod, this.#options.clock.now());
  }

  /**
   * Caches a recent pod that a claim turns out to be reserved for, as its events would have; returns
   * where it is cached (its Job's uid, null for a pod of its own), undefined when it is not recent.
   */
  #adoptRecent(uid: string): string | null | undefined {
    const pod = this.#recent.take(uid, this.#options.clock.now());
    if (pod === undefined || !this.#dra.usesClaims(pod)) return undefined;
    this.#dra.notePod(pod);
    if (pod.jobUid === null) this.#pods.set(uid, pod);
    else this.#jobPods.set(pod.jobUid, uid, pod);
    return pod.jobUid;
  }

  /** Maps again the workloads of the pods a DRA change affects. */
  #remapDra(change: DraChange): void {
    if (change === 'none') return;
    if (change === 'all') {
      const usesClaims = (pod: PodFacts): boolean => this.#dra.usesClaims(pod);
      this.#remapWhere((job, pods) => job.askPerPod.dra || pods.some(usesClaims), usesClaims);
      return;
    }
    const jobs = new Set<string>();
    for (const uid of change.pods) {
      const noted = this.#dra.jobOf(uid);
      const jobUid = noted === undefined ? this.#adoptRecent(uid) : noted;
      if (jobUid === undefined) continue; // not seen yet: it finds the claim when it comes
      if (jobUid !== null) jobs.add(jobUid);
      else {
        const pod = this.#pods.get(uid);
        if (pod !== undefined) this.#queue(this.#mapper.standalone(pod));
      }
    }
    for (const jobUid of jobs) {
      if (this.#jobs.has(jobUid)) this.#queueJob(jobUid);
      else {
        for (const pod of this.#jobPods.podsOf(jobUid)) {
          if (!change.pods.has(pod.uid)) continue;
          this.#batch.addInterval(this.#mapper.podInterval(pod, { workloadId: jobUid, observedAt: pod.observedAt }));
        }
      }
    }
  }

  #remapWhere(jobAffected: (job: JobFacts, pods: readonly PodFacts[]) => boolean, podAffected: (pod: PodFacts) => boolean): void {
    for (const [uid, job] of this.#jobs) if (jobAffected(job, this.#jobPods.podsOf(uid))) this.#queueJob(uid);
    for (const pod of this.#pods.values()) if (podAffected(pod)) this.#queue(this.#mapper.standalone(pod));
  }

  #queueJob(uid: string): void {
    const job = this.#jobs.get(uid);
    if (job !== undefined) this.#queue(this.#mapper.job(job, { pods: this.#jobPods.podsOf(uid) }));
  }

  #queue(mapped: MappedWorkload | null): void {
    if (mapped === null) return;
    if (this.#sink === null) {
      if (isTerminal(mapped.workload.status)) {
        this.#finishedWhileStandby.set(mapped.workload.workloadId, { mapped, at: this.#options.clock.now() });
      }
      return;
    }
    this.#batch.addRow(mapped.workload);
    for (const interval of mapped.intervals) this.#batch.addInterval(interval);
  }

  #forgetFinishedBefore(time: number): void {
    for (const [id, { at }] of this.#finishedWhileStandby) if (at < time) this.#finishedWhileStandby.delete(id);
  }

  #see<T extends Versioned>(previous: Versioned | undefined, object: T): T {
    return see(previous, object, this.#options.clock);
  }

  /**
   * The event as the caches take it, its objects reduced (pages.take's reduction): a change, or a
   * whole snapshot once its LIST is complete. Undefined for a page, which is only gathered.
   */
  #whole<T, R>(event: ResourceEvent<T>, pages: SnapshotPages<T, R>): WholeEvent<R> | undefined {
    if (event.type === 'PAGE' || event.type === 'SYNC') {
      const items = pages.take(event);
      if (items === undefined) return undefined;
      this.#stats.events += 1;
      this.#syncsReceived += 1;
      return { type: 'SYNC', items, ...(event.namespace === undefined ? {} : { namespace: event.namespace }) };
    }
    this.#stats.events += 1;
    return {
      type: event.type,
      object: pages.reduce(event.object),
      ...(event.resourceVersion === undefined ? {} : { resourceVersion: event.resourceVersion }),
    };
  }
}

function isFinished(mapped: MappedWorkload | null): boolean {
  return mapped !== null && isTerminal(mapped.workload.status);
}
