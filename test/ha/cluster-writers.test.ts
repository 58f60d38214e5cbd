// The election loop, against a lock shared by several replicas in one process (the database's part
// is tested against a real PostgreSQL in test/store/postgres/lease.test.ts) and the real SQLite
// lease, with manual time: standby, takeover, loss, an unreachable database, release, and the fleet
// identity (the lock tried once the kube-system UID is known; a cluster id of another Kubernetes
// cluster refused).
import { setImmediate as settle } from 'node:timers/promises';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import sinon from 'sinon';
import { registerWriterMetrics } from '../../src/admin/writer-metrics.js';
import { ClusterWriters, type ClusterWritersOptions } from '../../src/ha/cluster-writers.js';
import type { ClusterIdentity, LeaseHolder, WriteSession, WriterLeases, WriterTargets } from '../../src/ha/ports.js';
import { SqliteLeases } from '../../src/store/sqlite/lease.js';
import type { ClusterWrites } from '../../src/store/ports.js';
import { FixedClock } from '../support/fixed-clock.js';
import { openTempStore, type TempStore } from '../store/temp-store.js';

/** Delays that end only when the test says so. */
function manualDelays() {
  const waiting: { ms: number; resolve: () => void }[] = [];
  const delay = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      waiting.push({ ms, resolve });
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  /** Ends every delay running now, then lets what they released run. */
  const elapse = async () => {
    for (const entry of waiting.splice(0)) entry.resolve();
    await settle();
  };
  return { delay, elapse, waits: () => waiting.map((entry) => entry.ms) };
}

/** One lock per cluster shared by the replicas of this process, as the database would hold it. */
class SharedLock {
  readonly holders = new Map<string, { instance: string; epoch: number; lose: (error: Error) => void; snapshot: boolean }>();
  epochs = new Map<string, number>();
  unreachable = false;
  heartbeatFails = false;
  /** Why each abandoned session was abandoned. */
  readonly abandoned: string[] = [];
  /** The kube-system UID recorded per cluster id, as clusters.kube_system_uid. */
  readonly recorded = new Map<string, string>();
  /** The identity of every try, in order. */
  readonly tries: (string | null)[] = [];

  leasesOf(instance: string, sink: ClusterWrites): WriterLeases {
    return {
      lease: (clusterId) => ({
        acquire: async (identity: ClusterIdentity) => {
          this.tries.push(identity.kubeSystemUid);
          if (this.unreachable) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          const recorded = this.recorded.get(clusterId);
          const uid = identity.kubeSystemUid;
          if (uid !== null && recorded !== undefined && recorded !== uid) {
            throw Object.assign(new Error(`Refusing to write cluster "${clusterId}": recorded ${recorded}, this replica ${uid}`), {
              code: 'CLUSTER_IDENTITY_CONFLICT', clusterId, recordedKubeSystemUid: recorded, kubeSystemUid: uid,
            });
          }
          if (this.holders.has(clusterId)) return null;
          if (uid !== null && recorded === undefined) this.recorded.set(clusterId, uid);
          const epoch = (this.epochs.get(clusterId) ?? 0) + 1;
          this.epochs.set(clusterId, epoch);
          let lose: (error: Error) => void = () => undefined;
          const lost = new Promise<Error>((resolve) => (lose = resolve));
          this.holders.set(clusterId, { instance, epoch, lose, snapshot: false });
          const session: WriteSession = {
            ...sink,
            epoch,
            lost,
            heartbeat: async () => {
              if (this.heartbeatFails) throw new Error('Connection terminated unexpectedly');
            },
            markSnapshotWritten: async () => {
              const holder = this.holders.get(clusterId);
              if (holder?.epoch === epoch) holder.snapshot = true;
            },
            release: async () => {
              if (this.holders.get(clusterId)?.epoch === epoch) this.holders.delete(clusterId);
            },
            abandon: (reason) => {
              this.abandoned.push(reason.message);
              if (this.holders.get(clusterId)?.epoch === epoch) this.holders.delete(clusterId);
              lose(reason);
            },
          };
          return session;
        },
      }),
      holders: async (): Promise<LeaseHolder[]> =>
        [...this.holders].map(([clusterId, h]) => ({ clusterId, holder: h.instance, epoch: h.epoch, heartbeatAgeSeconds: 0, snapshotWritten: h.snapshot })),
    };
  }

  /** The writer's connection breaks: the database frees its lock, and its session learns it. */
  breakWriter(clusterId: string, reason: Error = new Error('Connection terminated')): void {
    const holder = this.holders.get(clusterId);
    this.holders.delete(clusterId);
    holder?.lose(reason);
  }
}

/** The namespaces' first list, as the informers deliver it: with a kube-system namespace of this UID (none if null). */
function namespacesListed(kubeSystemUid: string | null) {
  const items = [{ metadata: { name: 'default', uid: 'default-uid' } }, ...(kubeSystemUid === null ? [] : [{ metadata: { name: 'kube-system', uid: kubeSystemUid } }])];
  return { type: 'SYNC' as const, items, resourceVersion: '1' };
}

/** Attaches the cluster and delivers its namespaces' first list, as the informers would. */
function attachListed(writers: ClusterWriters, clusterId: string, kubeSystemUid: string | null = 'uid-east') {
  const attached = writers.attach({ clusterId });
  attached.onEvent('namespaces', namespacesListed(kubeSystemUid));
  return attached;
}

function recordingTargets(written = true) {
  const calls: string[] = [];
  const targets: WriterTargets & { calls: string[]; written: boolean } = {
    calls,
    written,
    becomeWriter: (clusterId) => calls.push(`writer ${clusterId}`),
    standby: (clusterId) => calls.push(`standby ${clusterId}`),
    snapshotsWritten: () => targets.written,
  };
  return targets;
}

describe('ha/cluster-writers', () => {
  let t: TempStore;
  let clock: FixedClock;
  let time: ReturnType<typeof manualDelays>;
  const logger = () => ({ info: sinon.spy(), warn: sinon.spy(), error: sinon.spy() });
  const options = (instanceId: string): ClusterWritersOptions => ({ instanceId, retryMs: 2000, maxBackoffMs: 5000, clock, delay: time.delay, random: () => 0.5, logger: logger() });

  beforeEach(() => {
    clock = new FixedClock(Date.parse('2026-11-26T10:00:00Z'));
    time = manualDelays();
    t = openTempStore({ clock });
  });
  afterEach(() => t.close());

  it('on SQLite takes every cluster at once, writes it, and gives it back on detach', async () => {
    const targets = recordingTargets();
    const writers = new ClusterWriters(new SqliteLeases(t.sink, 'pod-a'), targets, options('pod-a'));
    const attached = attachListed(writers, 'gpu-east');
    await settle();
    expect(targets.calls).to.deep.equal(['writer gpu-east']);
    expect(writers.statuses()[0]).to.include({ clusterId: 'gpu-east', role: 'writer', epoch: 1, takeovers: 1, lastError: null });
    expect(writers.indexed('gpu-east')).to.equal(true);

    await time.elapse(); // a heartbeat: the snapshot is written, so it is recorded
    await writers.refreshHolders();
    expect(writers.statuses()[0]?.holder).to.deep.equal({ clusterId: 'gpu-east', holder: 'pod-a', epoch: 1, heartbeatAgeSeconds: 0, snapshotWritten: true });

    await attached.detach();
    expect(targets.calls).to.deep.equal(['writer gpu-east', 'standby gpu-east']);
    await writers.refreshHolders();
    expect(writers.statuses()).to.deep.equal([]);
  });

  it('one replica writes, the other stands by and takes over at its next try once the writer is gone', async () => {
    const lock = new SharedLock();
    const [a, b] = [recordingTargets(), recordingTargets()];
    const first = new ClusterWriters(lock.leasesOf('pod-a', t.sink), a, options('pod-a'));
    const second = new ClusterWriters(lock.leasesOf('pod-b', t.sink), b, options('pod-b'));
    attachListed(first, 'local');
    await settle();
    attachListed(second, 'local');
    await settle();
    expect([first.statuses()[0]?.role, second.statuses()[0]?.role]).to.deep.equal(['writer', 'standby']);
    expect(b.calls).to.deep.equal([]);
    // A standby retries every 2 s ± 20 %.
    expect(time.waits()).to.include(2000);

    lock.breakWriter('local');
    await settle();
    expect(first.statuses()[0]).to.include({ role: 'standby', epoch: null, lastError: 'Connection terminated' });
    expect(a.calls).to.deep.equal(['writer local', 'standby local']);

    await time.elapse();
    expect(second.statuses()[0]).to.include({ role: 'writer', epoch: 2, takeovers: 1 });
    expect(b.calls).to.deep.equal(['writer local']);
    // The replica that lost the lock stays a standby while the new writer holds it.
    await time.elapse();
    expect(first.statuses()[0]?.role).to.equal('standby');
  });

  it('a standby answers for the cluster only once the current writer has written its snapshot', async () => {
    const lock = new SharedLock();
    const writerTargets = recordingTargets(false);
    const writer = new ClusterWriters(lock.leasesOf('pod-a', t.sink), writerTargets, options('pod-a'));
    const standby = new ClusterWriters(lock.leasesOf('pod-b', t.sink), recordingTargets(), options('pod-b'));
    attachListed(writer, 'local');
    attachListed(standby, 'local');
    await settle();
    await standby.refreshHolders();
    expect([writer.indexed('local'), standby.indexed('local')]).to.deep.equal([false, false]);

    writerTargets.written = true;
    await time.elapse(); // the writer's heartbeat records the snapshot
    await standby.refreshHolders();
    expect([writer.indexed('local'), standby.indexed('local')]).to.deep.equal([true, true]);
    expect(standby.indexed('other')).to.equal(false);
  });

  it('reports an unreachable database, backs off up to the limit, and writes again once it answers', async () => {
    const lock = new SharedLock();
    lock.unreachable = true;
    const targets = recordingTargets();
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.sink), targets, options('pod-a'));
    attachListed(writers, 'local');
    await settle();
    expect(writers.statuses()[0]).to.include({ role: 'database-unavailable', lastError: 'connect ECONNREFUSED 127.0.0.1:5432' });
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      waits.push(...time.waits());
      await time.elapse();
    }
    expect(waits).to.deep.equal([2000, 4000, 5000, 5000]);

    lock.unreachable = false;
    await time.elapse();
    expect(writers.statuses()[0]).to.include({ role: 'writer', lastError: null });
    expect(targets.calls).to.deep.equal(['writer local']);
  });

  it('stands by when a heartbeat fails, and takes the lock again once it is free', async () => {
    const lock = new SharedLock();
    const targets = recordingTargets();
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.sink), targets, options('pod-a'));
    attachListed(writers, 'local');
    await settle();
    lock.heartbeatFails = true;
    await time.elapse();
    expect(writers.statuses()[0]).to.include({ role: 'database-unavailable', lastError: 'lease renewal failed: Connection terminated unexpectedly' });
    expect(targets.calls).to.deep.equal(['writer local', 'standby local']);
    // The session is ended, its connection with the lock, rather than left to go stale.
    expect(lock.abandoned).to.deep.equal(['lease renewal failed: Connection terminated unexpectedly']);
    expect(lock.holders.has('local')).to.equal(false);

    lock.heartbeatFails = false;
    await time.elapse();
    expect(writers.statuses()[0]).to.include({ role: 'writer', epoch: 2, takeovers: 2 });
  });

  it('reports the database unavailable when the session lost its lease unrenewed, and a standby when it was fenced out', async () => {
    const lock = new SharedLock();
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.sink), recordingTargets(), options('pod-a'));
    attachListed(writers, 'local');
    await settle();
    const expired = Object.assign(new Error('The write lease of cluster "local" (epoch 1) was not renewed within 10 s: giving it up'), { code: 'LEASE_EXPIRED' });
    lock.breakWriter('local', expired);
    await settle();
    expect(writers.statuses()[0]).to.include({ role: 'database-unavailable', epoch: null, lastError: expired.message });

    await time.elapse();
    expect(writers.statuses()[0]).to.include({ role: 'writer', epoch: 2 });
    lock.breakWriter('local', Object.assign(new Error('Cluster "local" is written by a newer epoch than 2'), { code: 'FENCED_OUT' }));
    await settle();
    expect(writers.statuses()[0]).to.include({ role: 'standby', epoch: null });
  });

  it('tries the lock only once the namespaces\' first list told the kube-system UID, and tries it with that UID', async () => {
    const lock = new SharedLock();
    const targets = recordingTargets();
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.sink), targets, options('pod-a'));
    const attached = writers.attach({ clusterId: 'local' });
    await settle();
    await time.elapse();
    expect(lock.tries).to.deep.equal([]);
    expect(writers.statuses()[0]).to.include({ role: 'standby', identity: 'waiting', kubeSystemUid: null });
    expect(writers.statuses()[0]?.lastError).to.match(/Waiting for the first list of namespaces/);
    // Changes of other namespaces before the list tell nothing.
    attached.onEvent('namespaces', { type: 'ADDED', object: { metadata: { name: 'team-a', uid: 'x' } } });
    attached.onEvent('nodes', namespacesListed('not-a-namespace'));
    await settle();
    expect(lock.tries).to.deep.equal([]);

    attached.onEvent('namespaces', namespacesListed('uid-east'));
    await settle();
    expect(lock.tries).to.deep.equal(['uid-east']);
    expect(writers.statuses()[0]).to.include({ role: 'writer', identity: 'known', kubeSystemUid: 'uid-east', lastError: null, identityConflict: null });
    expect(lock.recorded.get('local')).to.equal('uid-east');
  });

  it('without a kube-system namespace in the list, takes the lock without the check and says so once', async () => {
    const lock = new SharedLock();
    lock.recorded.set('local', 'uid-east');
    const options_ = options('pod-a');
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.sink), recordingTargets(), options_);
    const attached = attachListed(writers, 'local', null);
    attached.onEvent('namespaces', namespacesListed(null)); // a relist
    await settle();
    expect(lock.tries).to.deep.equal([null]);
    expect(writers.statuses()[0]).to.include({ role: 'writer', identity: 'not-visible', kubeSystemUid: null });
    const warned = (options_.logger.warn as sinon.SinonSpy).getCalls().map((call) => String(call.args[1]));
    expect(warned.filter((message) => /No kube-system namespace/.test(message))).to.have.length(1);
  });

  it('stays standby while the cluster id is recorded for another Kubernetes cluster: says why once, answers for nothing, and takes over once it is cleared', async () => {
    const lock = new SharedLock();
    const west = new ClusterWriters(lock.leasesOf('pod-west', t.sink), recordingTargets(), options('pod-west'));
    const east = new ClusterWriters(lock.leasesOf('pod-east', t.sink), recordingTargets(), options('pod-east'));
    const eastOptions = options('pod-east-2');
    const eastTargets = recordingTargets();
    const late = new ClusterWriters(lock.leasesOf('pod-east-2', t.sink), eastTargets, eastOptions);
    attachListed(west, 'local', 'uid-west');
    await settle();
    expect(west.statuses()[0]).to.include({ role: 'writer' });

    attachListed(east, 'local', 'uid-east');
    attachListed(late, 'local', 'uid-east');
    await settle();
    for (let i = 0; i < 3; i++) await time.elapse();
    await late.refreshHolders();
    const refused = late.statuses()[0];
    expect(refused).to.include({ role: 'standby', epoch: null, takeovers: 0, kubeSystemUid: 'uid-east' });
    expect(refused?.identityConflict).to.deep.equal({ recordedKubeSystemUid: 'uid-west', kubeSystemUid: 'uid-east' });
    expect(refused?.lastError).to.equal('Refusing to write cluster "local": recorded uid-west, this replica uid-east');
    // The writer of the other cluster has written its snapshot, but not of the cluster this replica watches.
    expect(late.indexed('local')).to.equal(false);
    expect(eastTargets.calls).to.deep.equal([]);
    expect((eastOptions.logger.error as sinon.SinonSpy).callCount).to.equal(1);
    expect((eastOptions.logger.error as sinon.SinonSpy).firstCall.args[0]).to.include({ cluster: 'local', kubeSystemUid: 'uid-east', recordedKubeSystemUid: 'uid-west' });
    expect(west.statuses()[0]).to.include({ role: 'writer', epoch: 1 });

    const registry = new Registry();
    registerWriterMetrics(registry, () => late.statuses());
    const metrics = await registry.metrics();
    expect(metrics).to.match(/^gpucap_cluster_writer_identity_conflict\{cluster="local"\} 1$/m);
    expect(metrics).to.match(/^gpucap_cluster_writer\{cluster="local"\} 0$/m);

    // The writer of the other cluster leaves, and the recorded UID is cleared (docs/scaling.md).
    lock.breakWriter('local');
    lock.recorded.delete('local');
    await time.elapse();
    const roles = [east.statuses()[0], late.statuses()[0]];
    expect(roles.map((status) => status?.role).sort()).to.deep.equal(['standby', 'writer']);
    expect(roles.map((status) => status?.identityConflict)).to.deep.equal([null, null]);
    expect(lock.recorded.get('local')).to.equal('uid-east');
    expect(await registry.metrics()).to.match(/^gpucap_cluster_writer_identity_conflict\{cluster="local"\} 0$/m);
  });
});
