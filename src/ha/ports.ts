// Who writes which cluster. Every replica follows every cluster it watches (warm caches); only the
// holder of a cluster's write lock writes its rows. The backend owns the lock (a PostgreSQL advisory
// lock on the connection it writes with; SQLite grants it at once, one pod being the only writer),
// and satisfies these ports structurally; a session writes through the store's writer port.
import type { ClusterWrites } from '../store/ports.js';

/** The right to write one cluster, for as long as `lost` has not resolved. */
export interface WriteSession extends ClusterWrites {
  /** Increases with every takeover of the cluster: a write of an older epoch is refused. */
  readonly epoch: number;
  /**
   * Resolves (never rejects) once the lock is gone: the connection broke, another replica fenced this
   * one out (an error of `code` 'FENCED_OUT'), or the lease ran out before it could be renewed (the
   * database did not answer in time: `code` 'LEASE_EXPIRED').
   */
  readonly lost: Promise<Error>;
  /** Renews the lease; rejects (and `lost` resolves) when the lock is gone. */
  heartbeat(): Promise<void>;
  /** This epoch has written the cluster's whole picture once: standbys may report the cluster ready. */
  markSnapshotWritten(): Promise<void>;
  /** Gives the lock up after the last write, so that a standby takes over at once. */
  release(): Promise<void>;
  /**
   * Ends the session at once, without a round trip, once a renewal failed: its connection, which holds
   * the lock, is closed rather than left holding it unrenewed until it goes stale (every replica, this
   * one included, would wait for that), and nothing still queued on it is sent. A backend whose lock
   * is not tied to a connection (SQLite) has nothing to end.
   */
  abandon?(reason: Error): void;
}

/**
 * Which Kubernetes cluster this replica watches under a cluster id: the UID of its kube-system
 * namespace, which a cluster keeps for its whole life and no other cluster has. Null when kube-system
 * is not visible: the replica then writes without the check.
 */
export interface ClusterIdentity {
  kubeSystemUid: string | null;
}

/**
 * Why `acquire` refused: the shared database records another Kubernetes cluster (another kube-system
 * UID) under this cluster id. The replica must stay standby; `message` says how to fix it.
 */
export interface ClusterIdentityConflict extends Error {
  readonly code: 'CLUSTER_IDENTITY_CONFLICT';
  readonly clusterId: string;
  /** The kube-system UID the database records for the cluster id (its first writer's). */
  readonly recordedKubeSystemUid: string;
  /** This replica's. */
  readonly kubeSystemUid: string;
}

export interface ClusterLease {
  /**
   * The session when the lock was free; null when another replica holds it and is alive. Rejects with
   * a ClusterIdentityConflict, without touching the lock or its holder, when the cluster id belongs
   * to another Kubernetes cluster; the first takeover of a cluster id records `identity`.
   */
  acquire(identity: ClusterIdentity): Promise<WriteSession | null>;
}

/** A cluster's writer, as the shared database records it. */
export interface LeaseHolder {
  clusterId: string;
  holder: string;
  epoch: number;
  heartbeatAgeSeconds: number;
  /** The current epoch has written the cluster's whole picture. */
  snapshotWritten: boolean;
}

export interface WriterLeases {
  lease(clusterId: string): ClusterLease;
  /** Every cluster's current writer. */
  holders(): Promise<LeaseHolder[]>;
}

/** The indexers of this replica, which write a cluster only while told to. */
export interface WriterTargets {
  becomeWriter(clusterId: string, sink: ClusterWrites): void;
  standby(clusterId: string): void;
  /** Everything this replica's LISTs (and its takeover) led to is written. */
  snapshotsWritten(clusterId: string): boolean;
}
