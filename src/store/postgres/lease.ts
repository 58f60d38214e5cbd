// A cluster's write lock on PostgreSQL: the session-level advisory lock (1735, cluster_key), held on
// the one connection that also carries the cluster's writes. A writer that loses its connection (it
// died, it was partitioned, the server restarted) loses the lock with it, and any write still on its
// way fails with the socket. writer_leases records who holds it: the epoch, raised at every takeover
// and checked by every write transaction (the fence), and a heartbeat on the server's clock. A standby
// that finds the lock held but the heartbeat older than the lease ends the holder's backend
// (pg_terminate_backend), which frees the lock: a frozen or partitioned writer is replaced within
// about lease + retry seconds without waiting for TCP keepalives. The holder gives up first: a
// heartbeat that cannot renew the lease before it runs out ends the session's connection (which frees
// the lock as soon as the server hears of it), so that a cut-off writer never goes on calling itself
// the writer after a standby may have taken over, nor leaves a transaction queued to commit once the
// network heals. Design: issue 16 plan §4.
// One cluster id names one Kubernetes cluster: the first takeover records the kube-system namespace
// UID of the cluster its replica watches in clusters.kube_system_uid, and a replica that watches
// another one (another UID) is refused the lock, before it may end a stale holder's session; it stays
// standby until its release gets an id of its own, or the recorded UID is cleared after a rebuild
// (docs/scaling.md, "Fleet identity"). A replica that cannot see kube-system is not checked.
import type pg from 'pg';
import { connectWriter, type ConnectionLogger } from './connection.js';
import { LOCK_CLASS } from './locks.js';

export interface SessionWriter<Sink> {
  /** Builds the writes of a session on the lock's connection (it may read what it needs first). */
  (connection: FencedConnection): Sink | Promise<Sink>;
}

/** The lock's connection, lent to the writer one transaction at a time. */
export interface FencedConnection {
  clusterId: string;
  epoch: number;
  /**
   * Runs `work` in one transaction that first checks this epoch still holds the lease (a fenced-out
   * writer's transaction fails with FencedOut, and the session is lost). Serialized with heartbeats.
   */
  transaction<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T>;
  /** Runs `work` outside any transaction (DDL that takes its own), serialized like the rest. */
  outside<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T>;
}

export class FencedOut extends Error {
  readonly code = 'FENCED_OUT';

  constructor(clusterId: string, epoch: number) {
    super(`Cluster "${clusterId}" is written by a newer epoch than ${epoch}: this replica no longer holds its write lock`);
    this.name = 'FencedOut';
  }
}

/** The session could not renew its lease in time: from then on a standby may end it and take over. */
export class LeaseExpired extends Error {
  readonly code = 'LEASE_EXPIRED';

  constructor(clusterId: string, epoch: number, leaseSeconds: number) {
    super(`The write lease of cluster "${clusterId}" (epoch ${epoch}) was not renewed within ${leaseSeconds} s: giving it up`);
    this.name = 'LeaseExpired';
  }
}

/** The cluster id is recorded for another Kubernetes cluster: this replica must not write it. */
export class ClusterIdentityConflict extends Error {
  readonly code = 'CLUSTER_IDENTITY_CONFLICT';
  readonly clusterId: string;
  readonly recordedKubeSystemUid: string;
  readonly kubeSystemUid: string;

  constructor(clusterId: string, recordedKubeSystemUid: string, kubeSystemUid: string) {
    const literal = `'${clusterId.replaceAll("'", "''")}'`;
    super(
      `Refusing to write cluster "${clusterId}": the database records it for the Kubernetes cluster whose kube-system namespace UID is ` +
        `${recordedKubeSystemUid}, but this replica watches the one whose kube-system UID is ${kubeSystemUid}. Two releases with one ` +
        'cluster id would mix two clusters\' workloads. If this release watches another cluster, give it a cluster id of its own ' +
        '(config.cluster_id, GPUCAP_CLUSTER_ID). If this is the same cluster, rebuilt, and no release of the old one runs any more, ' +
        `clear the recorded UID (UPDATE clusters SET kube_system_uid = NULL WHERE cluster_id = ${literal};): ` +
        'the next takeover records the new one.',
    );
    this.name = 'ClusterIdentityConflict';
    this.clusterId = clusterId;
    this.recordedKubeSystemUid = recordedKubeSystemUid;
    this.kubeSystemUid = kubeSystemUid;
  }
}

/** Which Kubernetes cluster a replica watches (src/ha/ports.ts): null when kube-system is not visible. */
export interface ClusterIdentity {
  kubeSystemUid: string | null;
}

export interface PostgresLeasesOptions {
  url: string;
  instanceId: string;
  /** A heartbeat older than this on the server's clock marks the writer dead. */
  leaseSeconds: number;
  logger: ConnectionLogger;
  /** Runs a read of the lease table (the read pool). */
  read: (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>;
}

interface HolderRow {
  cluster_id: string;
  holder: string;
  epoch: number;
  age_seconds: number;
  snapshot_written: boolean;
}

const REGISTER = 'INSERT INTO clusters (cluster_id) VALUES ($1) ON CONFLICT (cluster_id) DO NOTHING';
const CLUSTER_KEY = 'SELECT cluster_key FROM clusters WHERE cluster_id = $1';
const RECORDED_UID = 'SELECT kube_system_uid FROM clusters WHERE cluster_id = $1';
// Under the lock: records the UID at the cluster id's first takeover, and returns what is recorded.
const RECORD_UID = 'UPDATE clusters SET kube_system_uid = COALESCE(kube_system_uid, $2) WHERE cluster_id = $1 RETURNING kube_system_uid';
const TRY_LOCK = `SELECT pg_try_advisory_lock(${LOCK_CLASS}, $1) AS locked`;
const UNLOCK = `SELECT pg_advisory_unlock(${LOCK_CLASS}, $1)`;
// The backend holding the lock, if its lease has gone stale (judged on the server's clock only).
const STALE_HOLDER = `
  SELECT l.pid FROM pg_locks l JOIN writer_leases w ON w.cluster_id = $1
  WHERE l.locktype = 'advisory' AND l.classid = ${LOCK_CLASS} AND l.objid = $2 AND l.objsubid = 2 AND l.granted
    AND w.heartbeat_at < clock_timestamp() - make_interval(secs => $3)`;
// Ending a backend is a signal: without the timeout (PostgreSQL 14+) the lock could still be held by
// the dying backend when this session tries it again right after, and the takeover would wait a retry.
const TERMINATE = 'SELECT pg_terminate_backend($1, 3000)';
const TAKE = `
  INSERT INTO writer_leases (cluster_id, epoch, holder, holder_pid, acquired_at, heartbeat_at)
  VALUES ($1, 1, $2, pg_backend_pid(), clock_timestamp(), clock_timestamp())
  ON CONFLICT (cluster_id) DO UPDATE SET epoch = writer_leases.epoch + 1, holder = excluded.holder,
    holder_pid = excluded.holder_pid, acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at
  RETURNING epoch`;
const FENCE = 'UPDATE writer_leases SET heartbeat_at = clock_timestamp() WHERE cluster_id = $1 AND epoch = $2';
const SNAPSHOT = 'UPDATE writer_leases SET snapshot_epoch = epoch WHERE cluster_id = $1 AND epoch = $2';
// A released lease reads as stale at once: a standby that still finds the lock held (it raced the
// unlock) does not wait a whole lease for it.
const RELEASE = "UPDATE writer_leases SET heartbeat_at = '-infinity' WHERE cluster_id = $1 AND epoch = $2";
const HOLDERS = `
  SELECT cluster_id, holder, epoch, GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - heartbeat_at))::float8 AS age_seconds,
    snapshot_epoch = epoch AS snapshot_written
  FROM writer_leases WHERE heartbeat_at > '-infinity' ORDER BY cluster_id`;

export class PostgresLeases<Sink extends object> {
  readonly #options: PostgresLeasesOptions;
  readonly #writer: SessionWriter<Sink>;

  constructor(options: PostgresLeasesOptions, writer: SessionWriter<Sink>) {
    this.#options = options;
    this.#writer = writer;
  }

  lease(clusterId: string): { acquire(identity?: ClusterIdentity): Promise<(Sink & LeaseSession) | null> } {
    return new ClusterLock(clusterId, this.#options, this.#writer);
  }

  async holders(): Promise<{ clusterId: string; holder: string; epoch: number; heartbeatAgeSeconds: number; snapshotWritten: boolean }[]> {
    const { rows } = await this.#options.read(HOLDERS, []);
    return (rows as HolderRow[]).map((row) => ({
      clusterId: row.cluster_id,
      holder: row.holder,
      epoch: row.epoch,
      heartbeatAgeSeconds: row.age_seconds,
      snapshotWritten: row.snapshot_written,
    }));
  }
}

export interface LeaseSession {
  readonly epoch: number;
  readonly lost: Promise<Error>;
  heartbeat(): Promise<void>;
  markSnapshotWritten(): Promise<void>;
  release(): Promise<void>;
  /** Ends the session now, without a round trip: closing the connection gives the lock up. */
  abandon(reason: Error): void;
}

/**
 * One cluster's lock as this replica tries it. A standby keeps its connection between tries (one per
 * contested cluster); it is opened again after a break.
 */
class ClusterLock<Sink extends object> {
  readonly #clusterId: string;
  readonly #options: PostgresLeasesOptions;
  readonly #writer: SessionWriter<Sink>;
  #client: pg.Client | null = null;
  #key: number | null = null;

  constructor(clusterId: string, options: PostgresLeasesOptions, writer: SessionWriter<Sink>) {
    this.#clusterId = clusterId;
    this.#options = options;
    this.#writer = writer;
  }

  /** `identity` unknown (null UID): taken without the check, and nothing recorded. */
  async acquire(identity: ClusterIdentity = { kubeSystemUid: null }): Promise<(Sink & LeaseSession) | null> {
    const uid = identity.kubeSystemUid;
    const client = await this.#connection();
    try {
      const key = await this.#clusterKey(client);
      // Refused before anything else: a replica of another cluster must not end the session of a
      // writer whose lease went stale, nor hold the lock for a moment.
      if (uid !== null) {
        const { rows } = await client.query<{ kube_system_uid: string | null }>(RECORDED_UID, [this.#clusterId]);
        const recorded = rows[0]?.kube_system_uid ?? null;
        if (recorded !== null && recorded !== uid) throw new ClusterIdentityConflict(this.#clusterId, recorded, uid);
      }
      if (!(await this.#tryLock(client, key))) {
        const stale = await client.query<{ pid: number }>(STALE_HOLDER, [this.#clusterId, key, this.#options.leaseSeconds]);
        const holder = stale.rows[0];
        if (holder === undefined) return null;
        await client.query(TERMINATE, [holder.pid]);
        this.#options.logger.warn(
          { cluster: this.#clusterId, pid: holder.pid },
          'Ended the session of a cluster writer whose lease went stale',
        );
        if (!(await this.#tryLock(client, key))) return null;
      }
      if (uid !== null) {
        // Checked again under the lock: another cluster's replica may have taken it first, since.
        const { rows } = await client.query<{ kube_system_uid: string | null }>(RECORD_UID, [this.#clusterId, uid]);
        const recorded = rows[0]?.kube_system_uid ?? null;
        if (recorded !== null && recorded !== uid) {
          await client.query(UNLOCK, [key]);
          throw new ClusterIdentityConflict(this.#clusterId, recorded, uid);
        }
      }
      const taken = await client.query<{ epoch: number }>(TAKE, [this.#clusterId, this.#options.instanceId]);
      const epoch = taken.rows[0]?.epoch ?? 0;
      // The session owns the connection from here; the next acquire opens its own.
      this.#client = null;
      return await this.#session(client, key, epoch);
    } catch (error) {
      // A refusal leaves the connection as it was (not locked): the standby keeps it for its next try.
      if (!(error instanceof ClusterIdentityConflict)) this.#drop(client);
      throw error;
    }
  }

  async #connection(): Promise<pg.Client> {
    if (this.#client !== null) return this.#client;
    const client = await connectWriter(this.#options.url, {
      instanceId: this.#options.instanceId,
      logger: this.#options.logger,
      clusterId: this.#clusterId,
    });
    client.on('error', () => this.#drop(client));
    client.on('end', () => this.#drop(client));
    this.#client = client;
    return client;
  }

  #drop(client: pg.Client): void {
    if (this.#client === client) this.#client = null;
    void client.end().catch(() => undefined);
  }

  async #clusterKey(client: pg.Client): Promise<number> {
    if (this.#key !== null) return this.#key;
    await client.query(REGISTER, [this.#clusterId]);
    const { rows } = await client.query<{ cluster_key: number }>(CLUSTER_KEY, [this.#clusterId]);
    const key = rows[0]?.cluster_key;
    if (key === undefined) throw new Error(`Cluster "${this.#clusterId}" could not be registered in the database`);
    this.#key = key;
    return key;
  }

  async #tryLock(client: pg.Client, key: number): Promise<boolean> {
    const { rows } = await client.query<{ locked: boolean }>(TRY_LOCK, [key]);
    return rows[0]?.locked === true;
  }

  async #session(client: pg.Client, key: number, epoch: number): Promise<Sink & LeaseSession> {
    const lock = new HeldLock(client, { clusterId: this.#clusterId, key, epoch, leaseSeconds: this.#options.leaseSeconds });
    const connection: FencedConnection = {
      clusterId: this.#clusterId,
      epoch,
      transaction: (work) => lock.transaction(work),
      outside: (work) => lock.exclusive(() => work(client)),
    };
    const session: LeaseSession = {
      epoch,
      lost: lock.lost,
      heartbeat: () => lock.heartbeat(),
      markSnapshotWritten: () => lock.markSnapshotWritten(),
      release: () => lock.release(),
      abandon: (reason) => lock.end(reason),
    };
    return Object.assign(await this.#writer(connection), session);
  }
}

/**
 * The lock held on its connection: one transaction at a time on it (a heartbeat never lands inside a
 * write), every one fenced by the epoch, and the lease bounded. The lease runs from when its last
 * renewal was sent, which is no later than the server's heartbeat_at: a heartbeat still unanswered
 * when the lease runs out ends the session, before any standby may judge it stale. A heartbeat waits
 * behind a write, and each statement of a write on a dead network waits out pg's query_timeout:
 * without this bound a cut-off writer went on calling itself the writer for three timeouts, well
 * after a standby had taken over. pg's client.end() destroys a socket with a query in flight, so
 * everything queued on it fails at once.
 */
class HeldLock {
  readonly lost: Promise<Error>;
  readonly #client: pg.Client;
  readonly #held: { clusterId: string; key: number; epoch: number; leaseSeconds: number };
  #lose: (reason: Error) => void = () => undefined;
  #gone: Error | null = null;
  #renewalSentAt = performance.now(); // TAKE set the heartbeat just now
  #queue: Promise<unknown> = Promise.resolve();

  constructor(client: pg.Client, held: { clusterId: string; key: number; epoch: number; leaseSeconds: number }) {
    this.#client = client;
    this.#held = held;
    this.lost = new Promise<Error>((resolve) => (this.#lose = resolve));
    client.on('error', (error: Error) => this.end(error));
    client.on('end', () => this.end(new Error('Connection terminated')));
  }

  /** Ends the session once: the connection's end ends the backend, and the lock with it. */
  end(reason: Error): void {
    if (this.#gone !== null) return;
    this.#gone = reason;
    this.#lose(reason);
    void this.#client.end().catch(() => undefined);
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(() => {
      if (this.#gone !== null) throw this.#gone;
      return work();
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  transaction<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      await this.#client.query('BEGIN');
      try {
        const sentAt = await this.#fence();
        const result = await work(this.#client);
        await this.#client.query('COMMIT');
        // A write's fence renews the lease too, once it is committed.
        this.#renewalSentAt = sentAt;
        return result;
      } catch (error) {
        await this.#client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async heartbeat(): Promise<void> {
    const { clusterId, epoch, leaseSeconds } = this.#held;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const expiry = new LeaseExpired(clusterId, epoch, leaseSeconds);
        this.end(expiry);
        reject(expiry);
      }, Math.max(0, this.#renewalSentAt + leaseSeconds * 1000 - performance.now()));
    });
    try {
      this.#renewalSentAt = await Promise.race([this.exclusive(() => this.#fence()), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  markSnapshotWritten(): Promise<void> {
    return this.exclusive(async () => {
      await this.#client.query(SNAPSHOT, [this.#held.clusterId, this.#held.epoch]);
    });
  }

  release(): Promise<void> {
    return this.exclusive(async () => {
      await this.#client.query(RELEASE, [this.#held.clusterId, this.#held.epoch]);
      await this.#client.query(UNLOCK, [this.#held.key]);
      this.end(new Error('released'));
    });
  }

  /** Renews the lease (in the caller's transaction, if any); returns when it was sent. */
  async #fence(): Promise<number> {
    const sentAt = performance.now();
    const result = await this.#client.query(FENCE, [this.#held.clusterId, this.#held.epoch]);
    if (result.rowCount !== 1) {
      const fenced = new FencedOut(this.#held.clusterId, this.#held.epoch);
      this.end(fenced);
      throw fenced;
    }
    return sentAt;
  }
}
