// One WorkloadIndexer per watched cluster, all writing to the same index. The informers hand every
// event to attach()'s handler; flushAll() writes what the indexers have queued, on the service's flush
// interval, cluster by cluster in steps (one transaction each, the event loop free in between). A
// failed step is kept and retried at the next flush. A cluster let go (detach) is written one last
// time; if that write fails its queued changes are dropped, since no flush will come for it.
import type { GpuCounting } from '../mapping/pod-shares.js';
import type { Clock } from '../../domain/clock.js';
import type { IndexerCounters, WatchedResource } from '../../domain/cluster-status.js';
import { WorkloadIndexer } from './indexer.js';
import type { Job, Namespace, Node, Pod } from '../../k8s/objects/k8s-types.js';
import type { DeviceClass, ResourceClaim, ResourceSlice } from '../../k8s/objects/dra-types.js';
import type { NamespaceInitiatives } from '../../domain/namespace-initiatives.js';
import type { IntervalObserver } from '../../domain/interval-observer.js';
import type { InitiativeSource } from '../attribution/initiative-source.js';
import type { LabelKeys } from '../attribution/label-keys.js';
import type { IndexerLogger, WorkloadSink } from '../workload-sink.js';
import type { ResourceEvent } from '../../k8s/objects/resource-event.js';

export interface ClusterIndexersOptions {
  defaultOrganizationId: string;
  /** Items (rows, intervals) written per step of a flush; between steps the event loop is free. */
  stepItems?: number;
  /**
   * The flush interval: a flush whose batches took at least this long goes straight on to what was
   * queued meanwhile, which has waited an interval already (absent: one batch per cluster per flush).
   */
  backlogAfterMs?: number;
  /** Resolves on a later turn of the event loop (setImmediate), so requests and timers run between steps. */
  yieldToLoop: () => Promise<void>;
  keys: Readonly<LabelKeys>;
  /** Who decides the initiative (absent: `labels`). */
  initiativeSource?: InitiativeSource;
  gpuResources: readonly string[];
  /** KAI Scheduler's reservation namespace, whose pods are no workloads (null: none). */
  reservationNamespace?: string | null;
  counting?: GpuCounting;
  namespaceInitiatives?: NamespaceInitiatives;
  /** Where each cluster's indexer tells of the pod intervals it queues (the fleet's allocations; absent: nowhere). */
  intervalsOf?: (clusterId: string) => IntervalObserver;
  clock: Clock;
  logger: IndexerLogger & { error(obj: object, msg?: string): void };
}


/** The handler the informers of one cluster call, and how to let go of the cluster. */
export interface AttachedIndexer {
  onEvent(resource: WatchedResource, event: ResourceEvent<unknown>, namespace: string | undefined): void;
  detach(): Promise<void>;
}

// About 30-60 ms of SQLite work (rows and pods with their indexes and rollups): short enough for a request
// to wait, long enough that the commit per step stays a small share.
const DEFAULT_STEP_ITEMS = 500;

interface Entry {
  indexer: WorkloadIndexer;
  flushErrors: number;
  /** Write steps that did not fail, those that found nothing to write included. */
  progress: number;
}

export class ClusterIndexers {
  /** Null: every indexer starts as a standby, until becomeWriter() (the cluster's write lock is taken). */
  readonly #sink: WorkloadSink | null;
  readonly #options: ClusterIndexersOptions;
  readonly #entries = new Map<string, Entry>();

  constructor(sink: WorkloadSink | null, options: ClusterIndexersOptions) {
    this.#sink = sink;
    this.#options = options;
  }

  /** Maps the live workloads of these namespaces again, in every cluster (the namespace mapping changed). */
  remapNamespaces(namespaces: ReadonlySet<string>): void {
    for (const { indexer } of this.#entries.values()) indexer.remapNamespaces(namespaces);
  }

  attach(cluster: { clusterId: string; organizationId?: string }): AttachedIndexer {
    const { defaultOrganizationId, keys, initiativeSource, gpuResources, reservationNamespace, counting } = this.#options;
    const { namespaceInitiatives, intervalsOf, clock, logger } = this.#options;
    const indexer = new WorkloadIndexer(this.#sink, {
      clusterId: cluster.clusterId,
      clusterOrganizationId: cluster.organizationId,
      defaultOrganizationId,
      keys,
      ...(initiativeSource === undefined ? {} : { initiativeSource }),
      gpuResources,
      reservationNamespace,
      ...(counting === undefined ? {} : { counting }),
      ...(namespaceInitiatives === undefined ? {} : { namespaceInitiatives }),
      ...(intervalsOf === undefined ? {} : { intervals: intervalsOf(cluster.clusterId) }),
      clock,
      logger,
    });
    const entry: Entry = { indexer, flushErrors: 0, progress: 0 };
    this.#entries.set(cluster.clusterId, entry);
    return {
      // The objects are the API server's JSON: the mappers read every field defensively.
      onEvent: (resource, received, namespace) => {
        // A namespaced informer's LIST covers its namespace only: the indexer must not judge the rest by it.
        const event = (received.type === 'SYNC' || received.type === 'PAGE') && namespace !== undefined
          ? { ...received, namespace }
          : received;
        switch (resource) {
          case 'namespaces':
            return indexer.onNamespaceEvent(event as ResourceEvent<Namespace>);
          case 'nodes':
            return indexer.onNodeEvent(event as ResourceEvent<Node>);
          case 'jobs':
            return indexer.onJobEvent(event as ResourceEvent<Job>);
          case 'pods':
            return indexer.onPodEvent(event as ResourceEvent<Pod>);
          case 'resourceclaims':
            return indexer.onClaimEvent(event as ResourceEvent<ResourceClaim>);
          case 'resourceslices':
            return indexer.onSliceEvent(event as ResourceEvent<ResourceSlice>);
          case 'deviceclasses':
            return indexer.onDeviceClassEvent(event as ResourceEvent<DeviceClass>);
        }
      },
      detach: async () => {
        await this.#flushOne(cluster.clusterId, entry);
        if (this.#entries.get(cluster.clusterId) === entry) this.#entries.delete(cluster.clusterId);
      },
    };
  }

  /**
   * Writes every cluster's queued rows in steps, yielding to the event loop between steps; a cluster
   * whose write fails keeps them for the next call. While the writes take longer than the flush
   * interval (a backlog), it goes on with what was queued meanwhile instead of sleeping an interval
   * first: a sleep per batch left the writer idle for 40-60 % of a catch-up. It returns between two
   * rounds once `signal` aborts.
   */
  async flushAll(signal?: AbortSignal): Promise<void> {
    const { clock, backlogAfterMs } = this.#options;
    for (;;) {
      const started = clock.now();
      await this.#writeRound();
      const behind = backlogAfterMs !== undefined && clock.now() - started >= backlogAfterMs;
      if (!behind || signal?.aborted === true || ![...this.#entries.values()].some(({ indexer }) => indexer.pending > 0)) return;
    }
  }

  /** One batch of every cluster, each written in steps. */
  async #writeRound(): Promise<void> {
    const budget = this.#options.stepItems ?? DEFAULT_STEP_ITEMS;
    for (const [clusterId, entry] of [...this.#entries]) {
      for (;;) {
        let complete: boolean;
        try {
          complete = await entry.indexer.writeStep(budget);
        } catch (error) {
          this.#failed(clusterId, entry, error);
          break;
        }
        entry.progress += 1;
        if (complete) break;
        await this.#options.yieldToLoop();
      }
    }
  }

  /** This replica now writes the cluster through `sink`: its indexer writes the whole cached picture. */
  becomeWriter(clusterId: string, sink: WorkloadSink): void {
    this.#entries.get(clusterId)?.indexer.becomeWriter(sink);
  }

  /** Another replica writes the cluster (or this one lost its lock): the indexer stops writing. */
  standby(clusterId: string): void {
    this.#entries.get(clusterId)?.indexer.standby();
  }

  /** Every LIST the cluster's informers delivered so far is written to the index (false if unknown). */
  snapshotsWritten(clusterId: string): boolean {
    return this.#entries.get(clusterId)?.indexer.snapshotsWritten ?? false;
  }

  counters(): IndexerCounters[] {
    return [...this.#entries].map(([clusterId, { indexer, flushErrors }]) => {
      const stats = indexer.stats();
      return {
        clusterId,
        events: stats.events,
        rowsWritten: stats.rowsWritten,
        intervalsWritten: stats.intervalsWritten,
        cancelledByReconcile: stats.cancelledByReconcile,
        flushErrors,
        pending: indexer.pending,
      };
    });
  }

  /**
   * Each cluster's writer, for liveness: what waits to be written, and a count that moves with every
   * write step that succeeds. A count standing still while changes wait means the writes fail, or
   * the flush loop stopped calling flushAll().
   */
  writerProgress(): { clusterId: string; pending: number; progress: number }[] {
    return [...this.#entries].map(([clusterId, { indexer, progress }]) => ({ clusterId, pending: indexer.pending, progress }));
  }

  async #flushOne(clusterId: string, entry: Entry): Promise<void> {
    try {
      await entry.indexer.flush();
    } catch (error) {
      entry.flushErrors += 1;
      this.#options.logger.error(
        { err: error, cluster: clusterId, dropped: entry.indexer.pending },
        'Index write failed as the cluster was let go; its queued changes are dropped',
      );
    }
  }

  #failed(clusterId: string, entry: Entry, error: unknown): void {
    entry.flushErrors += 1;
    this.#options.logger.error(
      { err: error, cluster: clusterId, pending: entry.indexer.pending },
      'Index write failed; retrying at the next flush',
    );
  }
}
