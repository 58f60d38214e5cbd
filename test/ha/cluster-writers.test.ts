// The election loop, against a lock shared by several replicas in one process (the database's part
// is tested against a real PostgreSQL in test/store/postgres-lease.test.ts) and the real SQLite
// lease, with manual time: standby, takeover, loss, an unreachable database, release.
import { expect } from 'chai';
import sinon from 'sinon';
import { ClusterWriters, type ClusterWritersOptions } from '../../src/ha/cluster-writers.js';
import type { LeaseHolder, WriteSession, WriterLeases, WriterTargets } from '../../src/ha/ports.js';
import { SqliteLeases } from '../../src/store/sqlite/lease.js';
import type { WorkloadSink } from '../../src/workloads/workload-sink.js';
import { FixedClock } from '../support/fixed-clock.js';
import { openTempStore, type TempStore } from '../store/temp-store.js';

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

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

  leasesOf(instance: string, sink: WorkloadSink): WriterLeases {
    return {
      lease: (clusterId) => ({
        acquire: async () => {
          if (this.unreachable) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          if (this.holders.has(clusterId)) return null;
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
    const writers = new ClusterWriters(new SqliteLeases(t.store, 'pod-a'), targets, options('pod-a'));
    const attached = writers.attach({ clusterId: 'gpu-east' });
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
    const first = new ClusterWriters(lock.leasesOf('pod-a', t.store), a, options('pod-a'));
    const second = new ClusterWriters(lock.leasesOf('pod-b', t.store), b, options('pod-b'));
    first.attach({ clusterId: 'local' });
    await settle();
    second.attach({ clusterId: 'local' });
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
    const writer = new ClusterWriters(lock.leasesOf('pod-a', t.store), writerTargets, options('pod-a'));
    const standby = new ClusterWriters(lock.leasesOf('pod-b', t.store), recordingTargets(), options('pod-b'));
    writer.attach({ clusterId: 'local' });
    standby.attach({ clusterId: 'local' });
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
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.store), targets, options('pod-a'));
    writers.attach({ clusterId: 'local' });
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
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.store), targets, options('pod-a'));
    writers.attach({ clusterId: 'local' });
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
    const writers = new ClusterWriters(lock.leasesOf('pod-a', t.store), recordingTargets(), options('pod-a'));
    writers.attach({ clusterId: 'local' });
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
});
