// The write lock of a cluster on a real PostgreSQL: one holder at a time, a takeover once the holder's
// connection is gone or its lease went stale, the fence that refuses an older epoch's writes, and the
// holders as every replica reads them; and the fleet identity: one cluster id, one Kubernetes cluster
// (its kube-system namespace UID, recorded at the first takeover).
import { expect } from 'chai';
import pg from 'pg';
import sinon from 'sinon';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { ClusterIdentityConflict, FencedOut, LeaseExpired, PostgresLeases, type FencedConnection } from '../../../src/store/postgres/lease.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { rejectionOf } from '../../support/rejection.js';
import { waitFor } from '../../support/wait-for.js';

const quiet = { warn: () => undefined };

/** A writer whose only write records which epoch wrote, through the fenced transaction. */
const markWriter = (connection: FencedConnection) => ({
  mark: (label: string) =>
    connection.transaction(async (client) => {
      await client.query('CREATE TABLE IF NOT EXISTS marks (label text, epoch bigint)');
      await client.query('INSERT INTO marks VALUES ($1, $2)', [label, connection.epoch]);
    }),
});

describe('store/postgres lease', function () {
  this.timeout(60_000);
  let db: TestDatabase | undefined;
  let admin: pg.Client | undefined;
  const sessions: { release(): Promise<void> }[] = [];

  const replica = (instanceId: string, leaseSeconds = 10) =>
    new PostgresLeases(
      { url: connected().db.url, instanceId, leaseSeconds, logger: quiet, read: (sql, params) => connected().admin.query(sql, params) },
      markWriter,
    );
  const take = async (leases: ReturnType<typeof replica>, clusterId = 'local', kubeSystemUid: string | null = null) => {
    const session = await leases.lease(clusterId).acquire({ kubeSystemUid });
    if (session !== null) sessions.push(session);
    return session;
  };

  const connected = () => {
    if (db === undefined || admin === undefined) throw new Error('No test database');
    return { db, admin };
  };
  const sql = (text: string, params: unknown[] = []) => connected().admin.query(text, params);

  beforeEach(async function () {
    db = await freshDatabase(this);
    admin = new pg.Client({ connectionString: db.url, types: TYPES });
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.release().catch(() => undefined)));
    await admin?.end();
    await db?.drop();
  });

  it('grants the lock to one replica at a time, with a higher epoch at each takeover', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    const first = await take(a);
    expect(first?.epoch).to.equal(1);
    expect(await take(b)).to.equal(null);
    expect(await take(b, 'other')).to.have.property('epoch', 1);

    await first?.release();
    const second = await take(b);
    expect(second?.epoch).to.equal(2);
    expect((await a.holders()).map((h) => [h.clusterId, h.holder, h.epoch])).to.deep.equal([['local', 'pod-b', 2], ['other', 'pod-b', 1]]);
  });

  it('frees the lock with the holder\'s connection: a standby takes over once the holder\'s backend ends', async () => {
    const a = replica('pod-a');
    const b = replica('pod-b');
    const first = await take(a);
    await first?.mark('before');
    const rows = (await sql('SELECT holder_pid AS pid FROM writer_leases')).rows as { pid: number }[];
    await sql('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
    expect((await first?.lost)?.message).to.match(/terminat/i);
    const second = await take(b);
    expect(second?.epoch).to.equal(2);
    await second?.mark('after');
    expect((await rejectionOf(first?.mark('late') ?? Promise.resolve())).message).to.match(/terminat/i);
    expect((await sql('SELECT label, epoch FROM marks ORDER BY epoch')).rows).to.deep.equal([{ label: 'before', epoch: 1 }, { label: 'after', epoch: 2 }]);
  });

  it('ends the session of a holder whose heartbeat went stale, and then takes the lock', async () => {
    const a = replica('pod-a', 3);
    const b = replica('pod-b', 3);
    const first = await take(a);
    expect(await take(b)).to.equal(null);
    // The holder is alive but renews nothing (frozen, or cut off from the server).
    await sql("UPDATE writer_leases SET heartbeat_at = clock_timestamp() - interval '1 minute'");
    const second = await take(b);
    expect(second?.epoch).to.equal(2);
    await first?.lost;
    expect((await b.holders())[0]).to.include({ holder: 'pod-b', epoch: 2 });
  });

  it('fences out a writer whose epoch is no longer the lease\'s: its write fails and its session is lost', async () => {
    const first = await take(replica('pod-a'));
    await first?.heartbeat();
    await sql('UPDATE writer_leases SET epoch = epoch + 1');
    const refused = await rejectionOf(first?.mark('stale') ?? Promise.resolve());
    expect(refused).to.be.instanceOf(FencedOut);
    expect(await first?.lost).to.be.instanceOf(FencedOut);
    expect((await sql("SELECT to_regclass('marks') IS NULL AS none")).rows[0]).to.deep.equal({ none: true });
  });

  it('ends its own session when a heartbeat cannot renew the lease before it runs out: its writes fail, and its backend ends with the lock', async () => {
    const first = await take(replica('pod-a', 2));
    const pid = ((await sql('SELECT holder_pid FROM writer_leases')).rows[0] as { holder_pid: number }).holder_pid;
    // The renewal waits on the lease's row (as it would on a dead network) longer than the 2 s lease,
    // and less than lock_timeout, so that only the lease can end it.
    const blocker = new pg.Client({ connectionString: connected().db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT * FROM writer_leases FOR UPDATE');
      const started = performance.now();
      const renewal = rejectionOf(first?.heartbeat() ?? Promise.resolve());
      const queued = rejectionOf(first?.mark('queued') ?? Promise.resolve());
      expect(await renewal).to.be.instanceOf(LeaseExpired);
      expect(performance.now() - started).to.be.within(1_000, 4_000);
      expect(await first?.lost).to.be.instanceOf(LeaseExpired);
      expect((await queued).message).to.match(/lease|terminat/i);
      // The backend notices the closed connection when its lock wait ends (lock_timeout 5 s); a backend
      // waiting for the client (a partition) notices when the network delivers the close.
      await waitFor(async () => (await sql('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rows.length === 0, {
        what: 'the backend of the expired session to end', timeoutMs: 10_000,
      });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // Free, not stale: a replica that would wait 300 s for a stale lease gets it.
    expect(await take(replica('pod-b', 300))).to.have.property('epoch', 2);
    expect((await sql("SELECT to_regclass('marks') IS NULL AS none")).rows[0]).to.deep.equal({ none: true });
  });

  it('gives the lock up at once when the session is abandoned, and writes nothing after', async () => {
    const first = await take(replica('pod-a'));
    await first?.mark('before');
    first?.abandon(new Error('renewal failed'));
    expect((await first?.lost)?.message).to.equal('renewal failed');
    expect((await rejectionOf(first?.mark('after') ?? Promise.resolve())).message).to.equal('renewal failed');
    const second = await waitFor(() => take(replica('pod-b', 300)), { what: 'the abandoned lock to be free', timeoutMs: 5_000 });
    expect(second.epoch).to.equal(2);
    expect((await sql('SELECT label FROM marks')).rows).to.deep.equal([{ label: 'before' }]);
  });

  it('reports the heartbeat age and whether the epoch wrote its snapshot; a released lease is not reported', async () => {
    const leases = replica('pod-a');
    const session = await take(leases);
    await session?.heartbeat();
    let holder = (await leases.holders())[0];
    expect(holder).to.include({ clusterId: 'local', holder: 'pod-a', epoch: 1, snapshotWritten: false });
    expect(holder?.heartbeatAgeSeconds).to.be.within(0, 5);
    await session?.markSnapshotWritten();
    holder = (await leases.holders())[0];
    expect(holder?.snapshotWritten).to.equal(true);
    await session?.release();
    await waitFor(async () => (await leases.holders()).length === 0, { timeoutMs: 5000, what: 'the released lease to leave the holders' });
  });

  describe('fleet identity', () => {
    const EAST = '5f0c8e1a-0000-4000-8000-00000000ea57';
    const WEST = '9b1d2c3e-0000-4000-8000-0000000e5700';
    const codeOf = (error: Error) => (error as { code?: unknown }).code;
    const recorded = async (clusterId = 'local') =>
      ((await sql('SELECT kube_system_uid FROM clusters WHERE cluster_id = $1', [clusterId])).rows[0] as { kube_system_uid: string | null } | undefined)?.kube_system_uid;

    it('records the kube-system UID at the first takeover; a replica of the same cluster takes over as usual', async () => {
      const a = replica('east-a');
      const b = replica('east-b');
      const first = await take(a, 'local', EAST);
      expect(first?.epoch).to.equal(1);
      expect(await recorded()).to.equal(EAST);
      expect(await take(b, 'local', EAST)).to.equal(null);
      await first?.release();
      const second = await take(b, 'local', EAST);
      expect(second?.epoch).to.equal(2);
      await second?.mark('east');
      expect(await recorded()).to.equal(EAST);
    });

    it('refuses a replica of another Kubernetes cluster, with both UIDs, the cluster id and the fix, while the first keeps writing', async () => {
      const east = replica('east-a', 3);
      const west = replica('west-a', 3);
      const first = await take(east, "it's-local", EAST);
      await first?.mark('before');

      const refusal = await rejectionOf(take(west, "it's-local", WEST));
      expect(refusal).to.be.instanceOf(ClusterIdentityConflict);
      expect(refusal).to.include({ code: 'CLUSTER_IDENTITY_CONFLICT', clusterId: "it's-local", recordedKubeSystemUid: EAST, kubeSystemUid: WEST });
      expect(refusal.message).to.equal(
        `Refusing to write cluster "it's-local": the database records it for the Kubernetes cluster whose kube-system namespace UID is ${EAST}, ` +
          `but this replica watches the one whose kube-system UID is ${WEST}. Two releases with one cluster id would mix two clusters' workloads. ` +
          'If this release watches another cluster, give it a cluster id of its own (config.cluster_id, GPUCAP_CLUSTER_ID). If this is the same ' +
          'cluster, rebuilt, and no release of the old one runs any more, clear the recorded UID ' +
          "(UPDATE clusters SET kube_system_uid = NULL WHERE cluster_id = 'it''s-local';): the next takeover records the new one.",
      );
      // Refused even when the writer's lease went stale: it must not end the other cluster's writer.
      await sql("UPDATE writer_leases SET heartbeat_at = clock_timestamp() - interval '1 minute'");
      expect(codeOf(await rejectionOf(take(west, "it's-local", WEST)))).to.equal('CLUSTER_IDENTITY_CONFLICT');
      await first?.heartbeat();
      await first?.mark('after');
      expect((await sql('SELECT label, epoch FROM marks ORDER BY label')).rows).to.deep.equal([{ label: 'after', epoch: 1 }, { label: 'before', epoch: 1 }]);
      expect((await east.holders()).map((h) => [h.holder, h.epoch])).to.deep.equal([['east-a', 1]]);

      // Refused with the lock free as well; the lock stays free for the cluster's own replicas.
      await first?.release();
      expect(codeOf(await rejectionOf(take(west, "it's-local", WEST)))).to.equal('CLUSTER_IDENTITY_CONFLICT');
      expect((await sql('SELECT count(*)::int AS n FROM pg_locks WHERE locktype = \'advisory\' AND granted')).rows[0]).to.deep.equal({ n: 0 });
      expect(await take(replica('east-b'), "it's-local", EAST)).to.have.property('epoch', 2);
      expect(await recorded("it's-local")).to.equal(EAST);
    });

    it('checks again under the lock: a replica of another cluster that found no UID recorded, and then the lock free, is refused', async () => {
      const west = replica('west-a');
      // Between west's first check and its try of the lock, an east replica takes the cluster id,
      // records its UID, and leaves: west finds the lock free, and the UID is no longer its own.
      const query = pg.Client.prototype.query;
      let armed = true;
      const stub = sinon.stub(pg.Client.prototype, 'query').callsFake(async function (this: pg.Client, ...args: unknown[]) {
        if (armed && typeof args[0] === 'string' && args[0].includes('pg_try_advisory_lock')) {
          armed = false;
          const east = await take(replica('east-a'), 'local', EAST);
          await east?.release();
        }
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      });
      try {
        expect(codeOf(await rejectionOf(take(west, 'local', WEST)))).to.equal('CLUSTER_IDENTITY_CONFLICT');
      } finally {
        stub.restore();
      }
      expect(armed).to.equal(false);
      expect(await recorded()).to.equal(EAST);
      // West took nothing: the lease is east's, and the lock is free for the next east replica.
      expect((await sql('SELECT holder, epoch FROM writer_leases')).rows).to.deep.equal([{ holder: 'east-a', epoch: 1 }]);
      expect(await take(replica('east-b'), 'local', EAST)).to.have.property('epoch', 2);
    });

    it('takes over without the check when the replica cannot see kube-system, and records nothing', async () => {
      const first = await take(replica('east-a'), 'local', EAST);
      await first?.release();
      const blind = await take(replica('blind'), 'local', null);
      expect(blind?.epoch).to.equal(2);
      expect(await recorded()).to.equal(EAST);
      await blind?.release();
      expect(await take(replica('blind-2'), 'other', null)).to.have.property('epoch', 1);
      expect(await recorded('other')).to.equal(null);
    });

    it('lets a rebuilt cluster take its id back once the recorded UID is cleared', async () => {
      const old = await take(replica('east-old'), 'local', EAST);
      await old?.release();
      const rebuilt = replica('east-new');
      expect(codeOf(await rejectionOf(take(rebuilt, 'local', WEST)))).to.equal('CLUSTER_IDENTITY_CONFLICT');
      await sql("UPDATE clusters SET kube_system_uid = NULL WHERE cluster_id = 'local'");
      expect(await take(rebuilt, 'local', WEST)).to.have.property('epoch', 2);
      expect(await recorded()).to.equal(WEST);
    });
  });
});
