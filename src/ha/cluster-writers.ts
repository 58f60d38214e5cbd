// One election loop per watched cluster. A standby tries the cluster's write lock every
// retry interval (with jitter, so replicas do not try in step); the replica that gets it becomes the
// cluster's writer: its indexer writes the cached picture (as a relist would) and then every change.
// The writer renews its lease on the same period. When the lock is lost (the connection broke, or a
// standby ended the session of a writer whose heartbeat went stale) the indexer stands by again and
// the loop goes back to trying. A cluster let go releases its lock after its last write.
// A replica tries the lock only once it knows which Kubernetes cluster it watches (the kube-system
// namespace's UID, from the namespaces informer's first list): the database refuses it a cluster id
// recorded for another Kubernetes cluster, and it then stays standby (docs/scaling.md, "Fleet identity").
import type { WatchedResource } from '../domain/cluster-status.js';
import type { Clock } from '../domain/clock.js';
import type { ResourceEvent } from '../k8s/objects/resource-event.js';
import type { ClusterIdentity, ClusterIdentityConflict, LeaseHolder, WriteSession, WriterLeases, WriterTargets } from './ports.js';

export type WriterRole = 'writer' | 'standby' | 'database-unavailable';

export interface ClusterWriterStatus {
  clusterId: string;
  role: WriterRole;
  /** The epoch this replica writes under; null unless it is the writer. */
  epoch: number | null;
  /** When the role last changed (epoch ms). */
  since: number;
  /** Times this replica took the cluster over. */
  takeovers: number;
  /** Why the lock could not be tried or was lost last; null after a success. */
  lastError: string | null;
  /** The cluster's writer as the database says (refreshed each retry interval); null before the first read. */
  holder: LeaseHolder | null;
  /**
   * Whether this replica knows which Kubernetes cluster it watches: 'waiting' for the namespaces'
   * first list (the lock is not tried yet), 'known' (kubeSystemUid), or 'not-visible' (no kube-system
   * namespace in that list: the lock is tried without the check).
   */
  identity: 'waiting' | 'known' | 'not-visible';
  /** The UID of the watched cluster's kube-system namespace; null unless `identity` is 'known'. */
  kubeSystemUid: string | null;
  /** Set while the database refuses this replica the cluster id: it records another kube-system UID. */
  identityConflict: { recordedKubeSystemUid: string; kubeSystemUid: string } | null;
}

export interface ClusterWritersOptions {
  instanceId: string;
  retryMs: number;
  /** Longest wait between tries while the database cannot be reached. */
  maxBackoffMs?: number;
  clock: Clock;
  /** Resolves after `ms`, or as soon as `signal` aborts. */
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
  logger: {
    info(obj: object, msg?: string): void;
    warn(obj: object, msg?: string): void;
    error(obj: object, msg?: string): void;
  };
}

interface Loop {
  status: ClusterWriterStatus;
  session: WriteSession | null;
  controller: AbortController;
  done: Promise<void>;
  /** Resolves once the namespaces' first list said which Kubernetes cluster this is (or on abort). */
  identified: Promise<void>;
  identify: () => void;
}

const KUBE_SYSTEM = 'kube-system';
const WAITING_FOR_IDENTITY = 'Waiting for the first list of namespaces: the write ' +
  'lock is tried once the kube-system namespace UID is known';

const JITTER = 0.2;
const DEFAULT_MAX_BACKOFF_MS = 5_000;

export class ClusterWriters {
  readonly #leases: WriterLeases;
  readonly #targets: WriterTargets;
  readonly #options: ClusterWritersOptions;
  readonly #loops = new Map<string, Loop>();
  #holders = new Map<string, LeaseHolder>();

  constructor(leases: WriterLeases, targets: WriterTargets, options: ClusterWritersOptions) {
    this.#leases = leases;
    this.#targets = targets;
    this.#options = options;
  }

  /**
   * Starts the election of a newly watched cluster; detach() ends it, after the cluster's last write.
   * onEvent takes the cluster's informer events: the namespaces' tell which Kubernetes cluster it is.
   */
  attach(cluster: { clusterId: string }): {
    onEvent(resource: WatchedResource, event: ResourceEvent<unknown>, namespace?: string): void;
    detach(): Promise<void>;
  } {
    const { clusterId } = cluster;
    const controller = new AbortController();
    const status: ClusterWriterStatus = {
      clusterId, role: 'standby', epoch: null, since: this.#options.clock.now(), takeovers: 0, lastError: WAITING_FOR_IDENTITY,
      holder: this.#holders.get(clusterId) ?? null, identity: 'waiting', kubeSystemUid: null, identityConflict: null,
    };
    let identify: () => void = () => undefined;
    const identified = new Promise<void>((resolve) => (identify = resolve));
    controller.signal.addEventListener('abort', identify, { once: true });
    const loop: Loop = { status, session: null, controller, done: Promise.resolve(), identified, identify };
    loop.done = this.#elect(loop);
    this.#loops.set(clusterId, loop);
    return {
      onEvent: (resource, event) => {
        if (resource === 'namespaces') this.#onNamespaceEvent(loop, event);
      },
      detach: async () => {
        controller.abort();
        await loop.done;
        if (this.#loops.get(clusterId) === loop) this.#loops.delete(clusterId);
        const session = loop.session;
        loop.session = null;
        if (session === null) return;
        this.#targets.standby(clusterId);
        try {
          await session.release();
          this.#options.logger.info({ cluster: clusterId, epoch: session.epoch }, 'Released the write lock of the cluster');
        } catch (error) {
          // The lock goes with the connection anyway; a standby then waits for the lease to go stale.
          this.#options.logger.warn({ err: error, cluster: clusterId }, 'Could not release the write lock of the cluster');
        }
      },
    };
  }

  statuses(): ClusterWriterStatus[] {
    return [...this.#loops.values()].map((loop) => ({
      ...loop.status,
      holder: this.#holders.get(loop.status.clusterId) ?? null,
      identityConflict: loop.status.identityConflict === null ? null : { ...loop.status.identityConflict },
    }));
  }

  /**
   * Whether this replica can answer for the cluster: as its writer, once it has written the whole
   * picture; as a standby, once the current writer has (the index holds the cluster as the writer sees it).
   * Never while the cluster id is refused to this replica: the index holds another Kubernetes
   * cluster's rows under it, not the one this replica watches.
   */
  indexed(clusterId: string): boolean {
    const loop = this.#loops.get(clusterId);
    if (loop === undefined) return false;
    if (loop.status.identityConflict !== null) return false;
    if (loop.status.role === 'writer') return this.#targets.snapshotsWritten(clusterId);
    return this.#holders.get(clusterId)?.snapshotWritten === true;
  }

  /** Reads every cluster's writer from the database (for /readyz, /metrics and standbys' readiness). */
  async refreshHolders(): Promise<void> {
    const holders = await this.#leases.holders();
    this.#holders = new Map(holders.map((holder) => [holder.clusterId, holder]));
  }

  async #elect(loop: Loop): Promise<void> {
    const { clusterId } = loop.status;
    const { signal } = loop.controller;
    const lease = this.#leases.lease(clusterId);
    const { retryMs, maxBackoffMs = DEFAULT_MAX_BACKOFF_MS, delay, logger } = this.#options;
    let backoffMs = retryMs;
    await loop.identified;
    while (!signal.aborted) {
      let session: WriteSession | null;
      try {
        session = await lease.acquire(this.#identity(loop));
        this.#conflictEnded(loop);
      } catch (error) {
        if (isIdentityConflict(error)) {
          this.#refused(loop, error);
          backoffMs = retryMs;
          await delay(this.#jittered(retryMs), signal);
          continue;
        }
        this.#become(loop, 'database-unavailable', null, error);
        await delay(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
        continue;
      }
      backoffMs = retryMs;
      if (session === null) {
        this.#become(loop, 'standby', null, null);
        await delay(this.#jittered(retryMs), signal);
        continue;
      }
      if (signal.aborted) {
        // Let go while the lock was being taken: give it back without writing.
        await session.release().catch(() => undefined);
        return;
      }
      loop.session = session;
      loop.status.takeovers += 1;
      this.#become(loop, 'writer', session.epoch, null);
      logger.info(
        { cluster: clusterId, epoch: session.epoch, instance: this.#options.instanceId },
        'Took the write lock of the cluster: writing it',
      );
      this.#targets.becomeWriter(clusterId, session);
      const lost = await this.#hold(clusterId, session, signal);
      if (signal.aborted) return; // detach() writes the last changes, then releases
      loop.session = null;
      this.#targets.standby(clusterId);
      this.#become(loop, lostToDatabase(lost) ? 'database-unavailable' : 'standby', null, lost);
      logger.warn({ cluster: clusterId, epoch: session.epoch, err: lost }, 'Lost the write lock of the cluster: standing by');
      await delay(this.#jittered(retryMs), signal);
    }
  }

  /** Renews the lease until it is lost (returns why) or the loop is aborted (returns null). */
  async #hold(clusterId: string, session: WriteSession, signal: AbortSignal): Promise<Error | null> {
    const held = new AbortController();
    const abort = () => held.abort();
    signal.addEventListener('abort', abort);
    let lost: Error | null = null;
    void session.lost.then((reason) => {
      lost ??= reason;
      held.abort();
    });
    let snapshotMarked = false;
    try {
      while (!held.signal.aborted) {
        await this.#options.delay(this.#options.retryMs, held.signal);
        if (held.signal.aborted) break;
        try {
          await session.heartbeat();
          if (!snapshotMarked && this.#targets.snapshotsWritten(clusterId)) {
            await session.markSnapshotWritten();
            snapshotMarked = true;
          }
        } catch (error) {
          lost ??= new DatabaseGone(error);
          // Not renewed, the lock must not stay with this connection until it goes stale.
          session.abandon?.(lost);
          break;
        }
      }
    } finally {
      signal.removeEventListener('abort', abort);
    }
    return signal.aborted ? null : lost;
  }

  /** Learns the Kubernetes cluster's identity from the namespaces' lists and changes. */
  #onNamespaceEvent(loop: Loop, event: ResourceEvent<unknown>): void {
    const status = loop.status;
    let uid: string | null;
    if (event.type === 'SYNC') uid = kubeSystemUidIn(event.items);
    else if (event.type === 'ADDED' || event.type === 'MODIFIED') uid = kubeSystemUidIn([event.object]);
    else return;
    if (uid !== null && uid !== status.kubeSystemUid) {
      if (status.kubeSystemUid !== null) {
        this.#options.logger.warn(
          { cluster: status.clusterId, kubeSystemUid: uid, previousKubeSystemUid: status.kubeSystemUid },
          'The kube-system namespace of the watched cluster has a new UID: the next takeover checks the new one',
        );
      }
      status.identity = 'known';
      status.kubeSystemUid = uid;
    } else if (uid === null && event.type === 'SYNC' && status.identity === 'waiting') {
      status.identity = 'not-visible';
      this.#options.logger.warn(
        { cluster: status.clusterId },
        'No kube-system namespace in the cluster\'s namespaces: its write lock is taken ' +
          'without checking that the database\'s cluster id belongs to this Kubernetes cluster',
      );
    }
    if (status.identity !== 'waiting' && status.lastError === WAITING_FOR_IDENTITY) status.lastError = null;
    if (status.identity !== 'waiting') loop.identify();
  }

  #identity(loop: Loop): ClusterIdentity {
    return { kubeSystemUid: loop.status.kubeSystemUid };
  }

  /** The database records another Kubernetes cluster under this cluster id: stay standby, say why once. */
  #refused(loop: Loop, conflict: ClusterIdentityConflict): void {
    const status = loop.status;
    const previous = status.identityConflict;
    status.identityConflict = { recordedKubeSystemUid: conflict.recordedKubeSystemUid, kubeSystemUid: conflict.kubeSystemUid };
    this.#become(loop, 'standby', null, conflict);
    if (previous?.recordedKubeSystemUid === conflict.recordedKubeSystemUid && previous.kubeSystemUid === conflict.kubeSystemUid) return;
    this.#options.logger.error(
      {
        cluster: status.clusterId,
        kubeSystemUid: conflict.kubeSystemUid,
        recordedKubeSystemUid: conflict.recordedKubeSystemUid,
        instance: this.#options.instanceId,
      },
      conflict.message,
    );
  }

  #conflictEnded(loop: Loop): void {
    const status = loop.status;
    if (status.identityConflict === null) return;
    status.identityConflict = null;
    this.#options.logger.info(
      { cluster: status.clusterId, kubeSystemUid: status.kubeSystemUid },
      'The database no longer refuses this replica the cluster id: trying its write lock again',
    );
  }

  #become(loop: Loop, role: WriterRole, epoch: number | null, error: unknown): void {
    const status = loop.status;
    if (status.role !== role) status.since = this.#options.clock.now();
    status.role = role;
    status.epoch = epoch;
    status.lastError = error === null ? null : error instanceof Error ? error.message : String(error);
  }

  #jittered(ms: number): number {
    const random = this.#options.random ?? Math.random;
    return ms * (1 - JITTER + 2 * JITTER * random());
  }
}

/** A heartbeat that failed: the database or the connection is gone, not another writer. */
class DatabaseGone extends Error {
  readonly code = 'DATABASE_GONE';

  constructor(cause: unknown) {
    super(`lease renewal failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseGone';
  }
}

function isIdentityConflict(error: unknown): error is ClusterIdentityConflict {
  return error instanceof Error && (error as { code?: unknown }).code === 'CLUSTER_IDENTITY_CONFLICT';
}

/** The UID of the kube-system namespace among these objects (the API server's JSON), or null. */
function kubeSystemUidIn(objects: readonly unknown[]): string | null {
  for (const object of objects) {
    const metadata = (object as { metadata?: { name?: unknown; uid?: unknown } } | null)?.metadata;
    if (metadata?.name === KUBE_SYSTEM && typeof metadata.uid === 'string' && metadata.uid !== '') return metadata.uid;
  }
  return null;
}

/** Whether the lock went because the database did not answer (rather than another replica taking it). */
function lostToDatabase(reason: Error | null): boolean {
  const code = (reason as { code?: unknown } | null)?.code;
  return code === 'DATABASE_GONE' || code === 'LEASE_EXPIRED';
}
