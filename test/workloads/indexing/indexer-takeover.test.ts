// Two replicas follow the same cluster; only the one holding its write lock writes. A standby keeps
// its caches warm and writes nothing; once it becomes the writer it writes the picture its caches
// hold, as a relist would, so what a dead writer never flushed is not lost.
import { expect } from 'chai';
import sinon from 'sinon';
import { WorkloadIndexer } from '../../../src/workloads/indexing/indexer.js';
import type { Job, Pod } from '../../../src/k8s/objects/k8s-types.js';
import type { WorkloadSink } from '../../../src/workloads/workload-sink.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aJob, aJobPod, aPod, gpuContainer, ms, T0, terminated } from '../fixtures.js';

const AT = (hhmm: string): string => `2026-11-20T${hhmm}:00Z`;

/** Counts the writes that reach the store through it. */
function countingSink(store: WorkloadSink): WorkloadSink & { writes: () => number } {
  let writes = 0;
  return {
    writes: () => writes,
    upsertWorkloads: (records) => {
      writes += 1;
      return store.upsertWorkloads(records);
    },
    upsertPodIntervals: (intervals) => {
      writes += 1;
      return store.upsertPodIntervals(intervals);
    },
    closeOpenIntervals: (ids, at) => {
      writes += 1;
      return store.closeOpenIntervals(ids, at);
    },
    listUnfinished: (clusterId) => store.listUnfinished(clusterId),
  };
}

describe('workloads/indexer takeover', () => {
  let t: TestIndex;
  let clock: FixedClock;
  let replicas: WorkloadIndexer[];
  let sinks: ReturnType<typeof countingSink>[];

  const logger = () => ({ debug: sinon.spy(), info: sinon.spy(), warn: sinon.spy() });
  const runningJob = (uid: string): Job =>
    aJob({ metadata: { uid, name: uid, resourceVersion: '2' }, podSpec: { containers: [gpuContainer(1)] }, status: { startTime: AT('10:00') } });
  const runningPod = (uid: string, rv = '2'): Pod =>
    aPod({ metadata: { uid, name: uid, resourceVersion: rv }, spec: { containers: [gpuContainer(2)] }, status: { phase: 'Running', startTime: AT('10:00') } });
  /** Every replica's informers deliver every event. */
  const everyone = (deliver: (indexer: WorkloadIndexer) => void) => replicas.forEach(deliver);

  beforeEach(async () => {
    clock = new FixedClock(ms(T0));
    t = await openTestIndex({ clock });
    // One writer for both: this is about the indexers, not the lock they would take in turn.
    const store = await t.writer('local');
    sinks = [countingSink(store), countingSink(store)];
    replicas = sinks.map((sink) => new WorkloadIndexer(sink, { clusterId: 'local', defaultOrganizationId: 'acme', clock, logger: logger() }));
    const [, standby] = replicas;
    standby?.standby();
  });
  afterEach(() => t.close());

  it('a standby follows every event but writes nothing, and says it is not writing', async () => {
    const [writer, standby] = replicas as [WorkloadIndexer, WorkloadIndexer];
    everyone((i) => i.onJobEvent({ type: 'SYNC', items: [runningJob('job-1')] }));
    everyone((i) => i.onPodEvent({ type: 'SYNC', items: [aJobPod('job-1', { metadata: { uid: 'p-1' }, spec: { containers: [gpuContainer(1)] }, status: { phase: 'Running', startTime: AT('10:00') } })] }));
    await writer.flush();
    await standby.flush();
    expect(sinks[1]?.writes()).to.equal(0);
    expect(standby.pending).to.equal(0);
    expect([writer.writing, standby.writing]).to.deep.equal([true, false]);
    expect((await t.index.get('job-1', ms(AT('11:00'))))?.gpuHoursUsed).to.equal(1);
  });

  it('a new writer writes what the dead writer had not flushed, and cancels what vanished meanwhile', async () => {
    const [writer, standby] = replicas as [WorkloadIndexer, WorkloadIndexer];
    everyone((i) => i.onJobEvent({ type: 'SYNC', items: [] }));
    everyone((i) => i.onPodEvent({ type: 'SYNC', items: [runningPod('pod-a'), runningPod('pod-b')] }));
    await writer.flush();
    // The writer dies with these events queued: pod-c starts, pod-a is deleted, pod-b finishes.
    clock.set(ms(AT('11:00')));
    everyone((i) => i.onPodEvent({ type: 'ADDED', object: runningPod('pod-c') }));
    everyone((i) => i.onPodEvent({ type: 'DELETED', object: runningPod('pod-a', '3') }));
    const finished = aPod({ metadata: { uid: 'pod-b', name: 'pod-b', resourceVersion: '4' }, spec: { containers: [gpuContainer(2)] },
      status: { phase: 'Failed', startTime: AT('10:00'), containerStatuses: [terminated(3, AT('10:30'))] } });
    everyone((i) => i.onPodEvent({ type: 'MODIFIED', object: finished }));
    writer.standby();

    clock.set(ms(AT('11:05')));
    standby.becomeWriter(sinks[1] as WorkloadSink);
    await standby.flush();
    const read = ms(AT('12:00'));
    expect(await t.index.get('pod-c', read)).to.deep.include({ status: 'running', gpuHoursUsed: 4 });
    // pod-a was deleted while running: cancelled when the standby saw it go, not at the takeover.
    expect(await t.index.get('pod-a', read)).to.deep.include({ status: 'cancelled', completedAt: ms(AT('11:00')) });
    expect(await t.index.get('pod-b', read)).to.deep.include({ status: 'failed', exitCode: 3, completedAt: ms(AT('10:30')), gpuHoursUsed: 1 });
  });

  it('a takeover that changes nothing writes no row, and one before any LIST cancels nothing', async () => {
    const [writer, standby] = replicas as [WorkloadIndexer, WorkloadIndexer];
    everyone((i) => i.onJobEvent({ type: 'SYNC', items: [] }));
    everyone((i) => i.onPodEvent({ type: 'SYNC', items: [runningPod('pod-a')] }));
    await writer.flush();
    writer.standby();
    standby.becomeWriter(sinks[1] as WorkloadSink);
    await standby.flush();
    expect(standby.stats()).to.deep.include({ rowsFlushed: 1, rowsWritten: 0, cancelledByReconcile: 0 });

    const store = await t.writer('local');
    const fresh = new WorkloadIndexer(store, { clusterId: 'local', defaultOrganizationId: 'acme', clock, logger: logger() });
    fresh.becomeWriter(store);
    await fresh.flush();
    expect(fresh.stats().cancelledByReconcile).to.equal(0);
    expect((await t.index.get('pod-a', clock.now()))?.status).to.equal('running');
  });

  it('a new writer writes the finish of a pod that finished and was deleted while it stood by', async () => {
    const [writer, standby] = replicas as [WorkloadIndexer, WorkloadIndexer];
    everyone((i) => i.onJobEvent({ type: 'SYNC', items: [] }));
    everyone((i) => i.onPodEvent({ type: 'SYNC', items: [runningPod('pod-a')] }));
    await writer.flush();
    writer.standby(); // the writer dies before it sees more
    const done = aPod({ metadata: { uid: 'pod-a', name: 'pod-a', resourceVersion: '3' }, spec: { containers: [gpuContainer(2)] },
      status: { phase: 'Succeeded', startTime: AT('10:00'), containerStatuses: [terminated(0, AT('10:45'))] } });
    const whole = (rv: string, status: Pod['status']) => aPod({ metadata: { uid: 'pod-w', name: 'pod-w', resourceVersion: rv }, spec: { containers: [gpuContainer(1)] }, status });
    clock.set(ms(AT('11:00')));
    standby.onPodEvent({ type: 'MODIFIED', object: done });
    standby.onPodEvent({ type: 'DELETED', object: done });
    standby.onPodEvent({ type: 'ADDED', object: whole('1', { phase: 'Pending' }) });
    standby.onPodEvent({ type: 'MODIFIED', object: whole('2', { phase: 'Failed', startTime: AT('10:10'), containerStatuses: [terminated(2, AT('10:40'))] }) });
    standby.onPodEvent({ type: 'DELETED', object: whole('3', { phase: 'Failed', startTime: AT('10:10'), containerStatuses: [terminated(2, AT('10:40'))] }) });
    await standby.flush();
    expect(sinks[1]?.writes()).to.equal(0);

    clock.set(ms(AT('11:05')));
    standby.becomeWriter(sinks[1] as WorkloadSink);
    await standby.flush();
    const read = ms(AT('12:00'));
    expect(await t.index.get('pod-a', read)).to.deep.include({ status: 'completed', completedAt: ms(AT('10:45')), gpuHoursUsed: 1.5 });
    expect(await t.index.get('pod-w', read)).to.deep.include({ status: 'failed', exitCode: 2, completedAt: ms(AT('10:40')), gpuHoursUsed: 0.5 });
    expect(standby.stats().cancelledByReconcile).to.equal(0);
  });

  it('a writer that loses its lock keeps the finishes it had not written, for when it writes again', async () => {
    const [writer] = replicas as [WorkloadIndexer, WorkloadIndexer];
    everyone((i) => i.onJobEvent({ type: 'SYNC', items: [] }));
    everyone((i) => i.onPodEvent({ type: 'SYNC', items: [runningPod('pod-a')] }));
    await writer.flush();
    const done = aPod({ metadata: { uid: 'pod-a', name: 'pod-a', resourceVersion: '3' }, spec: { containers: [gpuContainer(2)] },
      status: { phase: 'Succeeded', startTime: AT('10:00'), containerStatuses: [terminated(0, AT('10:30'))] } });
    writer.onPodEvent({ type: 'MODIFIED', object: done });
    writer.onPodEvent({ type: 'DELETED', object: done });
    writer.standby(); // lost before the flush
    writer.becomeWriter(sinks[0] as WorkloadSink);
    await writer.flush();
    expect(await t.index.get('pod-a', ms(AT('12:00')))).to.deep.include({ status: 'completed', completedAt: ms(AT('10:30')), gpuHoursUsed: 1 });
  });

  it('forgets what it saw finish while standing by once that is older than a writer could have left unwritten', async () => {
    const [writer, standby] = replicas as [WorkloadIndexer, WorkloadIndexer];
    everyone((i) => i.onJobEvent({ type: 'SYNC', items: [] }));
    everyone((i) => i.onPodEvent({ type: 'SYNC', items: [runningPod('pod-a')] }));
    const done = aPod({ metadata: { uid: 'pod-a', name: 'pod-a', resourceVersion: '3' }, spec: { containers: [gpuContainer(2)] },
      status: { phase: 'Succeeded', startTime: AT('10:00'), containerStatuses: [terminated(0, AT('10:30'))] } });
    everyone((i) => i.onPodEvent({ type: 'MODIFIED', object: done }));
    everyone((i) => i.onPodEvent({ type: 'DELETED', object: done }));
    await writer.flush(); // the live writer wrote the finish
    clock.set(clock.now() + 14 * 60_000);
    await standby.writeStep(500);
    const kept = new WorkloadIndexer(null, { clusterId: 'local', defaultOrganizationId: 'acme', clock, logger: logger() });
    kept.onPodEvent({ type: 'SYNC', items: [runningPod('pod-a')] });
    kept.onPodEvent({ type: 'MODIFIED', object: done });
    kept.onPodEvent({ type: 'DELETED', object: done });
    clock.set(clock.now() + 14 * 60_000);
    await kept.writeStep(500);
    kept.becomeWriter(sinks[1] as WorkloadSink);
    await kept.flush();
    expect(kept.stats().rowsFlushed, 'seen 14 min ago: written again').to.equal(1);

    clock.set(clock.now() + 2 * 60_000);
    await standby.writeStep(500); // the flush loop's tick: seen 30 min ago, forgotten
    standby.becomeWriter(sinks[1] as WorkloadSink);
    await standby.flush();
    expect(standby.stats().rowsFlushed).to.equal(0);
    expect((await t.index.get('pod-a', clock.now()))?.status).to.equal('completed');
  });
});
