import { rejectionOf } from '../../support/rejection.js';
import { expect } from 'chai';
import sinon from 'sinon';
import type { WorkloadView } from '../../../src/domain/workload.js';
import type { WorkloadIndex } from '../../../src/query/ports.js';
import { WorkloadIndexer } from '../../../src/workloads/indexing/indexer.js';
import type { Job, Namespace, Pod } from '../../../src/k8s/objects/k8s-types.js';
import type { WorkloadSink } from '../../../src/workloads/workload-sink.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aContainer, aJob, aJobPod, aNamespace, aNode, aPod, gpuContainer, ms, T0, terminated } from '../fixtures.js';

const AT = (hhmm: string): string => `2026-11-20T${hhmm}:00Z`;

/** A sink that records every call and passes it on to the real writer. */
function countingSink(store: WorkloadSink): WorkloadSink & { calls: { rows: number[]; intervals: number[] } } {
  const calls = { rows: [] as number[], intervals: [] as number[] };
  return {
    calls,
    upsertWorkloads: (records) => {
      calls.rows.push(records.length);
      return store.upsertWorkloads(records);
    },
    upsertPodIntervals: (intervals) => {
      calls.intervals.push(intervals.length);
      return store.upsertPodIntervals(intervals);
    },
    closeOpenIntervals: (workloadIds, at) => store.closeOpenIntervals(workloadIds, at),
    listUnfinished: (clusterId) => store.listUnfinished(clusterId),
  };
}

const quietLogger = () => ({ debug: sinon.spy(), info: sinon.spy(), warn: sinon.spy() });

describe('workloads/indexer', () => {
  let t: TestIndex;
  let clock: FixedClock;
  let logger: ReturnType<typeof quietLogger>;
  let sink: ReturnType<typeof countingSink>;
  let indexer: WorkloadIndexer;

  const newIndexer = (): WorkloadIndexer =>
    new WorkloadIndexer(sink, { clusterId: 'local', defaultOrganizationId: 'default-org', clock, logger });
  const view = async (id: string, at = clock.now()): Promise<WorkloadView | undefined> => t.index.get(id, at);

  beforeEach(async () => {
    clock = new FixedClock(ms(T0));
    t = await openTestIndex({ clock });
    logger = quietLogger();
    sink = countingSink(await t.writer('local'));
    indexer = newIndexer();
  });
  afterEach(() => t.close());

  const podEvent = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Pod) => indexer.onPodEvent({ type, object });
  const jobEvent = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Job) => indexer.onJobEvent({ type, object });

  describe('standalone pods', () => {
    const gpuPod = (rv: string, status: Pod['status']): Pod =>
      aPod({ metadata: { uid: 'pod-1', resourceVersion: rv }, spec: { containers: [gpuContainer(2)] }, status });

    it('follows a GPU pod from pending through running to completed, with its GPU-hours', async () => {
      podEvent('ADDED', gpuPod('1', { phase: 'Pending' }));
      await indexer.flush();
      expect(await view('pod-1')).to.deep.include({ status: 'pending', kind: 'Pod', gpuCount: 2, startedAt: null, gpuHoursUsed: 0 });

      podEvent('MODIFIED', gpuPod('2', { phase: 'Running', startTime: AT('10:00') }));
      await indexer.flush();
      expect(await view('pod-1', ms(AT('11:00')))).to.deep.include({ status: 'running', startedAt: ms(AT('10:00')), gpuHoursUsed: 2 });

      const done = { phase: 'Succeeded', startTime: AT('10:00'), containerStatuses: [terminated(0, AT('13:00'))] };
      podEvent('MODIFIED', gpuPod('3', done));
      await indexer.flush();
      expect(await view('pod-1', ms(AT('20:00')))).to.deep.include({
        status: 'completed', completedAt: ms(AT('13:00')), exitCode: 0, gpuHoursUsed: 6, durationSeconds: 3 * 3600,
      });
    });

    it('makes a running pod that is deleted cancelled at the deletion, its GPU time ended', async () => {
      podEvent('ADDED', gpuPod('2', { phase: 'Running', startTime: AT('10:00') }));
      await indexer.flush();
      clock.set(AT('12:00'));
      podEvent('DELETED', gpuPod('3', { phase: 'Running', startTime: AT('10:00') }));
      await indexer.flush();
      const later = await view('pod-1', ms(AT('18:00')));
      expect(later).to.deep.include({ status: 'cancelled', completedAt: ms(AT('12:00')), exitCode: 0, failureReason: 'deleted', gpuHoursUsed: 4 });
    });

    it('keeps the row of a finished pod that is deleted as it was', async () => {
      const done = { phase: 'Failed', startTime: AT('10:00'), containerStatuses: [terminated(3, AT('11:00'))] };
      podEvent('ADDED', gpuPod('2', done));
      await indexer.flush();
      clock.set(AT('15:00'));
      podEvent('DELETED', gpuPod('3', { ...done, phase: 'Failed' }));
      await indexer.flush();
      expect(await view('pod-1')).to.deep.include({ status: 'failed', completedAt: ms(AT('11:00')), exitCode: 3, failureReason: 'nonzero_exit', resourceVersion: '2' });
    });

    it('stores why a pod failed: an OOMKilled container', async () => {
      const oom = { phase: 'Failed', startTime: AT('10:00'), containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: AT('11:00') } } }] };
      podEvent('ADDED', gpuPod('2', oom));
      await indexer.flush();
      expect(await view('pod-1')).to.deep.include({ status: 'failed', exitCode: 137, failureReason: 'oom_killed' });
    });

    it('stores the capacity type of the node a pod runs on, reads it back, and keeps it once the node is gone', async () => {
      indexer.onNodeEvent({ type: 'SYNC', items: [aNode({ 'karpenter.sh/capacity-type': 'spot', 'node.kubernetes.io/instance-type': 'g6e.48xlarge' })] });
      const onNode = (rv: string, status: Pod['status']): Pod =>
        aPod({ metadata: { uid: 'pod-1', resourceVersion: rv }, spec: { containers: [gpuContainer(2)], nodeName: 'node-1' }, status });
      podEvent('ADDED', onNode('2', { phase: 'Running', startTime: AT('10:00') }));
      await indexer.flush();
      expect(await view('pod-1')).to.deep.include({ status: 'running', instanceType: 'g6e.48xlarge', capacityType: 'spot' });
      expect(await t.sql("SELECT capacity_type FROM workloads WHERE workload_id = 'pod-1'")).to.deep.equal([{ capacity_type: 'spot' }]);
      // The node goes before its pod's last event: the row keeps what the node said, as its instance type.
      indexer.onNodeEvent({ type: 'DELETED', object: aNode() });
      podEvent('MODIFIED', onNode('3', { phase: 'Succeeded', startTime: AT('10:00'), containerStatuses: [terminated(0, AT('11:00'))] }));
      await indexer.flush();
      expect(await view('pod-1')).to.deep.include({ status: 'completed', instanceType: 'g6e.48xlarge', capacityType: 'spot' });
    });

    it('stores no capacity type for a pod on a node no label of which says one', async () => {
      indexer.onNodeEvent({ type: 'SYNC', items: [aNode({ 'node.kubernetes.io/instance-type': 'p5.48xlarge' })] });
      podEvent('ADDED', aPod({ metadata: { uid: 'pod-1' }, spec: { containers: [gpuContainer(1)], nodeName: 'node-1' }, status: { phase: 'Running', startTime: AT('10:00') } }));
      await indexer.flush();
      const row = await view('pod-1');
      expect(row).to.include({ instanceType: 'p5.48xlarge' });
      expect(row).to.not.have.property('capacityType');
      expect(await t.sql("SELECT capacity_type FROM workloads WHERE workload_id = 'pod-1'")).to.deep.equal([{ capacity_type: null }]);
    });

    it('ignores pods that request no GPU', async ()  => {
      podEvent('ADDED', aPod({ metadata: { uid: 'cpu-1' }, spec: { containers: [aContainer({ requests: { cpu: '2' } })] } }));
      indexer.onPodEvent({ type: 'SYNC', items: [aPod({ metadata: { uid: 'cpu-2' }, spec: { containers: [aContainer()] } })] });
      await indexer.flush();
      expect(await t.countRows()).to.equal(0);
      expect(sink.calls.rows).to.deep.equal([]);
    });

    it('cancels a running pod missing from a relist, its interval closed at now', async () => {
      podEvent('ADDED', gpuPod('2', { phase: 'Running', startTime: AT('10:00') }));
      await indexer.flush();
      clock.set(AT('13:00'));
      const restarted = newIndexer();
      restarted.onPodEvent({ type: 'SYNC', items: [] });
      await restarted.flush();
      expect(await view('pod-1', ms(AT('20:00')))).to.deep.include({ status: 'cancelled', completedAt: ms(AT('13:00')), gpuHoursUsed: 6 });
      expect(restarted.stats().cancelledByReconcile).to.equal(1);
    });
  });

  describe('jobs', () => {
    const twoGpuPod = { containers: [gpuContainer(2)], nodeName: 'node-1' };
    const aTrainingJob = (rv: string, status: Job['status']): Job =>
      aJob({ metadata: { uid: 'job-1', resourceVersion: rv }, spec: { parallelism: 2 }, podSpec: { containers: [gpuContainer(2)] }, status });
    const jobPod = (uid: string, created: string, status: Pod['status'], rv = '1'): Pod =>
      aJobPod('job-1', { metadata: { uid, creationTimestamp: created, resourceVersion: rv }, spec: twoGpuPod, status });
    const runningPod = (uid: string, start: string): Pod => jobPod(uid, start, { phase: 'Running', startTime: start });
    const finishedPod = (uid: string, created: string, end: string, exitCode = 0, rv = '1'): Pod =>
      jobPod(uid, created, { phase: exitCode === 0 ? 'Succeeded' : 'Failed', startTime: AT('10:00'), containerStatuses: [terminated(exitCode, end)] }, rv);
    const complete = { startTime: AT('10:00'), conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: AT('12:00') }] };

    it('folds a parallel Job and its two pods into one row: gpu_count × parallelism, GPU-hours summed', async () => {
      indexer.onNodeEvent({ type: 'SYNC', items: [aNode({ 'node.kubernetes.io/instance-type': 'p4d.24xlarge' })] });
      // Pods may be seen before their Job: the Job's row picks them up when it arrives.
      podEvent('ADDED', finishedPod('pod-a', AT('09:59'), AT('12:00')));
      podEvent('ADDED', finishedPod('pod-b', AT('09:58'), AT('11:00'), 2));
      jobEvent('ADDED', aTrainingJob('5', complete));
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.include({
        kind: 'Job', status: 'completed', gpuCount: 4, instanceType: 'p4d.24xlarge',
        completedAt: ms(AT('12:00')), exitCode: 0, gpuHoursUsed: 2 * 2 + 2 * 1,
      });
      expect(await t.countRows()).to.equal(1);
    });

    it('counts a running Job pod by pod and re-maps the Job when a pod changes', async () => {
      jobEvent('ADDED', aTrainingJob('5', { startTime: AT('10:00') }));
      podEvent('ADDED', runningPod('pod-a', AT('10:00')));
      await indexer.flush();
      expect(await view('job-1', ms(AT('11:00')))).to.deep.include({ status: 'running', gpuHoursUsed: 2, instanceType: 'unknown' });
      indexer.onNodeEvent({ type: 'ADDED', object: aNode({ 'nvidia.com/gpu.product': 'A100' }) });
      podEvent('MODIFIED', finishedPod('pod-a', AT('10:00'), AT('11:30'), 1, '2'));
      jobEvent('MODIFIED', aTrainingJob('6', { startTime: AT('10:00'), conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: AT('11:30') }] }));
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.include({ status: 'failed', exitCode: 1, failureReason: 'nonzero_exit', gpuHoursUsed: 3, instanceType: 'A100' });
    });

    it("stores why a Job failed from its condition, then its last pod's cause when that pod arrives later", async () => {
      const failed = { startTime: AT('10:00'), conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: AT('11:30') }] };
      jobEvent('ADDED', aTrainingJob('5', failed));
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.include({ status: 'failed', exitCode: 0, failureReason: 'backoff_limit_exceeded' });
      const oom = { phase: 'Failed', startTime: AT('10:00'), containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: AT('11:29') } } }] };
      podEvent('ADDED', jobPod('pod-a', AT('10:00'), oom));
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.include({ status: 'failed', exitCode: 137, failureReason: 'oom_killed' });
    });

    it('keeps the GPU time of a pod deleted while its Job runs, and of one missing from a relist', async () => {
      jobEvent('ADDED', aTrainingJob('5', { startTime: AT('10:00') }));
      podEvent('ADDED', runningPod('pod-a', AT('10:00')));
      await indexer.flush();
      clock.set(AT('11:00'));
      podEvent('DELETED', runningPod('pod-a', AT('10:00')));
      podEvent('ADDED', runningPod('pod-b', AT('11:00')));
      podEvent('ADDED', runningPod('pod-c', AT('11:00')));
      await indexer.flush();
      expect((await view('job-1', ms(AT('13:00'))))?.gpuHoursUsed).to.equal(2 * 1 + 2 * 2 + 2 * 2);
      clock.set(AT('12:00'));
      indexer.onPodEvent({ type: 'SYNC', items: [runningPod('pod-b', AT('11:00'))] }); // pod-c vanished
      await indexer.flush();
      expect(await view('job-1', ms(AT('13:00')))).to.deep.include({ status: 'running', gpuHoursUsed: 2 * 1 + 2 * 2 + 2 * 1 });
    });

    it('keeps the row of a finished Job that is deleted, pods included', async () => {
      jobEvent('ADDED', aTrainingJob('5', complete));
      podEvent('ADDED', finishedPod('pod-a', AT('10:00'), AT('12:00')));
      await indexer.flush();
      const before = await view('job-1', ms(AT('20:00')));
      clock.set(AT('18:00'));
      podEvent('DELETED', finishedPod('pod-a', AT('10:00'), AT('12:00')));
      jobEvent('DELETED', aTrainingJob('7', complete));
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.equal(before);
    });

    it('cancels a running Job that is deleted and ends its pods at the deletion', async () => {
      jobEvent('ADDED', aTrainingJob('5', { startTime: AT('10:00') }));
      podEvent('ADDED', runningPod('pod-a', AT('10:00')));
      await indexer.flush();
      clock.set(AT('11:00'));
      jobEvent('DELETED', aTrainingJob('6', { startTime: AT('10:00') }));
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.include({ status: 'cancelled', completedAt: ms(AT('11:00')), failureReason: 'deleted', gpuHoursUsed: 2 });
    });

    it('cancels a running Job missing from a relist at now, and logs it at warn', async () => {
      jobEvent('ADDED', aTrainingJob('5', { startTime: AT('10:00') }));
      jobEvent('ADDED', aJob({ metadata: { uid: 'job-2', name: 'other' }, status: { startTime: AT('10:00') } }));
      podEvent('ADDED', runningPod('pod-a', AT('10:00')));
      await indexer.flush();
      clock.set(AT('14:00'));
      indexer.onJobEvent({ type: 'SYNC', items: [aJob({ metadata: { uid: 'job-2', name: 'other' }, status: { startTime: AT('10:00') } })] });
      await indexer.flush();
      expect(await view('job-1', ms(AT('20:00')))).to.deep.include({ status: 'cancelled', completedAt: ms(AT('14:00')), failureReason: 'deleted', gpuHoursUsed: 8 });
      expect((await view('job-2'))?.status).to.equal('running');
      expect(indexer.stats().cancelledByReconcile).to.equal(1);
      sinon.assert.calledOnce(logger.warn);
      expect(logger.warn.firstCall.args[0]).to.deep.include({ kind: 'Job', workloadIds: ['job-1'] });
    });
  });

  describe('a restart: workloads that vanished while the service was down', () => {
    /** A new run of the service over the same index: its own connection, writer and indexer. */
    const nextRun = async (): Promise<{ store: WorkloadIndex; indexer: WorkloadIndexer }> => {
      const next = await t.nextRun();
      return { store: next.index, indexer: new WorkloadIndexer(await next.writer('local'), { clusterId: 'local', defaultOrganizationId: 'default-org', clock, logger }) };
    };
    const openIntervals = async (workloadId: string): Promise<unknown[]> =>
      (await t.sql('SELECT pod_uid FROM workload_pods WHERE workload_id = ? AND finished_at IS NULL', [workloadId])).map((row) => row.pod_uid);
    const usageSinceEver = async (store: WorkloadIndex, to: number): Promise<number> =>
      (await store.usage({ scope: { organizationId: 'default-org', initiatives: null } }, { from: null, to })).total;

    const runningJob = aJob({ metadata: { uid: 'job-1', resourceVersion: '5' }, spec: { parallelism: 2 }, podSpec: { containers: [gpuContainer(2)] }, status: { startTime: AT('10:00') } });
    const runningJobPod = (uid: string, rv = '1'): Pod =>
      aJobPod('job-1', { metadata: { uid, resourceVersion: rv }, spec: { containers: [gpuContainer(2)] }, status: { phase: 'Running', startTime: AT('10:00') } });

    /** The first run sees job-1 running with two 2-GPU pods since 10:00, and is gone at 11:00. */
    const firstRunSeesRunningJob = async (): Promise<void> => {
      jobEvent('ADDED', runningJob);
      podEvent('ADDED', runningJobPod('pod-a'));
      podEvent('ADDED', runningJobPod('pod-b'));
      await indexer.flush();
      expect(await openIntervals('job-1')).to.have.length(2);
    };

    it('a Job that vanished while the service was down stops accruing GPU-hours', async () => {
      await firstRunSeesRunningJob();
      clock.set(AT('12:00'));
      const second = await nextRun();
      second.indexer.onJobEvent({ type: 'SYNC', items: [] });
      second.indexer.onPodEvent({ type: 'SYNC', items: [] });
      await second.indexer.flush();

      const expected = 2 * 2 * 2; // two pods × 2 GPUs × 10:00 → 12:00
      expect(await second.store.get('job-1', ms(AT('12:00')))).to.deep.include({ status: 'cancelled', completedAt: ms(AT('12:00')), gpuHoursUsed: expected });
      expect((await second.store.get('job-1', ms(AT('23:00'))))?.gpuHoursUsed).to.equal(expected);
      expect(await usageSinceEver(second.store, ms(AT('23:00')))).to.be.closeTo(expected, 1e-9);
      expect(await openIntervals('job-1')).to.deep.equal([]);
      expect(second.indexer.stats()).to.deep.include({ cancelledByReconcile: 1, intervalsClosedByReconcile: 2 });
    });

    it('a standalone Pod that vanished while the service was down stops accruing GPU-hours', async () => {
      podEvent('ADDED', aPod({ metadata: { uid: 'pod-1', resourceVersion: '2' }, spec: { containers: [gpuContainer(4)] }, status: { phase: 'Running', startTime: AT('10:00') } }));
      await indexer.flush();
      clock.set(AT('11:30'));
      const second = await nextRun();
      second.indexer.onPodEvent({ type: 'SYNC', items: [] });
      await second.indexer.flush();

      expect(await second.store.get('pod-1', ms(AT('23:00')))).to.deep.include({ status: 'cancelled', completedAt: ms(AT('11:30')), gpuHoursUsed: 6 });
      expect(await usageSinceEver(second.store, ms(AT('23:00')))).to.be.closeTo(6, 1e-9);
      expect(await openIntervals('pod-1')).to.deep.equal([]);
    });

    it('keeps the intervals of a vanished Job closed while its pods are still listed and change', async () => {
      // The Job is gone but the garbage collector has not deleted its pods yet: the relist of Pods
      // and the events after it still show them running.
      await firstRunSeesRunningJob();
      clock.set(AT('12:00'));
      const second = await nextRun();
      second.indexer.onJobEvent({ type: 'SYNC', items: [] });
      second.indexer.onPodEvent({ type: 'SYNC', items: [runningJobPod('pod-a'), runningJobPod('pod-b')] });
      await second.indexer.flush();
      clock.set(AT('12:30'));
      second.indexer.onPodEvent({ type: 'MODIFIED', object: runningJobPod('pod-a', '2') });
      await second.indexer.flush();

      expect(await openIntervals('job-1')).to.deep.equal([]);
      expect(await second.store.get('job-1', ms(AT('23:00')))).to.deep.include({ status: 'cancelled', gpuHoursUsed: 8 });
    });

    it('closes the intervals whether the Pods or the Jobs are relisted first', async () => {
      await firstRunSeesRunningJob();
      clock.set(AT('12:00'));
      const second = await nextRun();
      second.indexer.onPodEvent({ type: 'SYNC', items: [runningJobPod('pod-a')] });
      second.indexer.onJobEvent({ type: 'SYNC', items: [] });
      await second.indexer.flush();

      expect(await openIntervals('job-1')).to.deep.equal([]);
      expect(await second.store.get('job-1', ms(AT('23:00')))).to.deep.include({ status: 'cancelled', gpuHoursUsed: 8 });
    });
  });

  describe('namespaces', () => {
    it('updates the initiative of the workloads in a namespace whose label changes', async () => {
      indexer.onNamespaceEvent({ type: 'SYNC', items: [aNamespace({ 'gpucap.io/initiative': 'vision' })] });
      podEvent('ADDED', aPod({ metadata: { uid: 'pod-1' } }));
      jobEvent('ADDED', aJob({ metadata: { uid: 'job-1' } }));
      await indexer.flush();
      expect((await view('pod-1'))?.initiativeId).to.equal('vision');
      indexer.onNamespaceEvent({ type: 'MODIFIED', object: aNamespace({ 'gpucap.io/initiative': 'nlp', 'gpucap.io/organization': 'research' }) });
      await indexer.flush();
      for (const id of ['pod-1', 'job-1']) expect(await view(id)).to.deep.include({ initiativeId: 'nlp', organizationId: 'research' });
    });

    it('re-maps nothing when a namespace is delivered again with the same labels', async ()  => {
      indexer.onNamespaceEvent({ type: 'ADDED', object: aNamespace({ 'gpucap.io/initiative': 'vision' }) });
      podEvent('ADDED', aPod({ metadata: { uid: 'pod-1' } }));
      await indexer.flush();
      indexer.onNamespaceEvent({ type: 'MODIFIED', object: aNamespace({ 'gpucap.io/initiative': 'vision' }) });
      expect(indexer.pending).to.equal(0);
    });

    describe('when the namespace decides the initiative (initiative_source: namespace)', () => {
      const allowing = (list: string | undefined, extra: Record<string, string> = {}): Namespace => ({
        metadata: { name: 'team-a', labels: { 'gpucap.io/initiative': 'vision' }, annotations: { ...(list === undefined ? {} : { 'gpucap.io/allowed-initiatives': list }), ...extra } },
      });
      const llmPod = aPod({ metadata: { uid: 'pod-1', labels: { 'gpucap.io/initiative': 'llm' } } });
      const llmJob = aJob({ metadata: { uid: 'job-1', labels: { 'gpucap.io/initiative': 'llm' } } });
      beforeEach(() => {
        indexer = new WorkloadIndexer(sink, { clusterId: 'local', defaultOrganizationId: 'default-org', initiativeSource: 'namespace', clock, logger });
      });

      it('follows an edit of the allowed-initiatives annotation, both ways', async () => {
        indexer.onNamespaceEvent({ type: 'SYNC', items: [allowing(undefined)] });
        podEvent('ADDED', llmPod);
        jobEvent('ADDED', llmJob);
        await indexer.flush();
        for (const id of ['pod-1', 'job-1']) expect((await view(id))?.initiativeId).to.equal('vision');
        indexer.onNamespaceEvent({ type: 'MODIFIED', object: allowing('speech, llm') });
        await indexer.flush();
        for (const id of ['pod-1', 'job-1']) expect((await view(id))?.initiativeId).to.equal('llm');
        indexer.onNamespaceEvent({ type: 'MODIFIED', object: allowing('speech') });
        await indexer.flush();
        for (const id of ['pod-1', 'job-1']) expect((await view(id))?.initiativeId).to.equal('vision');
      });

      it('re-maps nothing when another annotation of the namespace changes', async () => {
        indexer.onNamespaceEvent({ type: 'ADDED', object: allowing('llm') });
        podEvent('ADDED', llmPod);
        await indexer.flush();
        indexer.onNamespaceEvent({ type: 'MODIFIED', object: allowing('llm', { 'kubectl.kubernetes.io/last-applied-configuration': '{}' }) });
        expect(indexer.pending).to.equal(0);
      });
    });
  });

  describe('relists of one namespace (watched namespaces)', () => {
    const runningIn = (namespace: string, uid: string): Pod =>
      aPod({ metadata: { uid, namespace, resourceVersion: '1' }, status: { phase: 'Running', startTime: AT('10:00') } });
    const jobIn = (namespace: string, uid: string): Job => aJob({ metadata: { uid, namespace, resourceVersion: '1' }, status: { startTime: AT('10:00') } });

    it('judges only the relisted namespace: workloads of other namespaces stay as they are', async () => {
      indexer.onJobEvent({ type: 'SYNC', items: [jobIn('a', 'job-a')], namespace: 'a' });
      indexer.onJobEvent({ type: 'SYNC', items: [jobIn('b', 'job-b')], namespace: 'b' });
      indexer.onPodEvent({ type: 'SYNC', items: [runningIn('a', 'pod-a'), aJobPod('job-a', { metadata: { uid: 'pa', namespace: 'a' }, status: { phase: 'Running', startTime: AT('10:00') } })], namespace: 'a' });
      indexer.onPodEvent({ type: 'SYNC', items: [runningIn('b', 'pod-b'), aJobPod('job-b', { metadata: { uid: 'pb', namespace: 'b' }, status: { phase: 'Running', startTime: AT('10:00') } })], namespace: 'b' });
      await indexer.flush();
      for (const id of ['pod-a', 'pod-b', 'job-a', 'job-b']) expect((await view(id))?.status, id).to.equal('running');

      clock.set(AT('12:00'));
      indexer.onJobEvent({ type: 'SYNC', items: [], namespace: 'a' });
      indexer.onPodEvent({ type: 'SYNC', items: [], namespace: 'a' });
      await indexer.flush();
      expect(await view('pod-a')).to.deep.include({ status: 'cancelled', completedAt: ms(AT('12:00')) });
      expect(await view('job-a')).to.deep.include({ status: 'cancelled', completedAt: ms(AT('12:00')) });
      expect((await view('pod-b'))?.status).to.equal('running');
      expect(await view('job-b', ms(AT('14:00')))).to.deep.include({ status: 'running', gpuHoursUsed: 4 });
    });

    it('keeps the pods of other namespaces when one namespace is relisted, so their workloads keep what they derive from them', async () => {
      indexer.onNodeEvent({ type: 'SYNC', items: [aNode({ 'node.kubernetes.io/instance-type': 'p5.48xlarge' })] });
      const onNode = { spec: { nodeName: 'node-1', containers: [gpuContainer(1)] }, status: { phase: 'Running', startTime: AT('10:00') } };
      indexer.onJobEvent({ type: 'SYNC', items: [jobIn('b', 'job-b')], namespace: 'b' });
      indexer.onPodEvent({ type: 'SYNC', items: [aJobPod('job-b', { metadata: { uid: 'pb', namespace: 'b' }, ...onNode }), aPod({ metadata: { uid: 'pod-b', namespace: 'b' }, ...onNode })], namespace: 'b' });
      indexer.onPodEvent({ type: 'SYNC', items: [], namespace: 'a' });
      // The Job changes, and the node's label: both are re-mapped from the pods cached for namespace b.
      indexer.onJobEvent({ type: 'MODIFIED', object: { ...jobIn('b', 'job-b'), metadata: { ...jobIn('b', 'job-b').metadata, resourceVersion: '2' } } });
      indexer.onNodeEvent({ type: 'MODIFIED', object: aNode({ 'node.kubernetes.io/instance-type': 'p5e.48xlarge' }) });
      await indexer.flush();
      expect(await view('job-b')).to.deep.include({ status: 'running', instanceType: 'p5e.48xlarge' });
      expect(await view('pod-b')).to.deep.include({ status: 'running', instanceType: 'p5e.48xlarge' });
    });
  });

  describe('LISTs delivered page by page', () => {
    const running = (uid: string, namespace = 'team-a'): Pod =>
      aPod({ metadata: { uid, namespace, resourceVersion: '1' }, status: { phase: 'Running', startTime: AT('10:00') } });

    it('indexes a paged snapshot as it would the whole one, counting it once, and writes nothing before its SYNC', async () => {
      indexer.onPodEvent({ type: 'PAGE', items: [running('p1'), running('p2')], first: true });
      indexer.onPodEvent({ type: 'PAGE', items: [running('p3')], first: false });
      await indexer.flush();
      expect(await view('p1')).to.equal(undefined);
      indexer.onPodEvent({ type: 'SYNC', items: [], paged: true });
      expect(indexer.snapshotsWritten).to.equal(false);
      await indexer.flush();
      for (const id of ['p1', 'p2', 'p3']) expect((await view(id))?.status, id).to.equal('running');
      expect(indexer.snapshotsWritten).to.equal(true);
      expect(indexer.stats().events).to.equal(1);
    });

    it('voids the pages of a LIST that failed part way: the next LIST judges what vanished by its own pages', async () => {
      indexer.onPodEvent({ type: 'SYNC', items: [running('p1'), running('p2')] });
      await indexer.flush();
      clock.set(AT('12:00'));
      indexer.onPodEvent({ type: 'PAGE', items: [running('p1'), running('p2')], first: true });
      // The LIST failed; the next one finds p2 gone.
      indexer.onPodEvent({ type: 'PAGE', items: [running('p1')], first: true });
      indexer.onPodEvent({ type: 'SYNC', items: [], paged: true });
      await indexer.flush();
      expect((await view('p1'))?.status).to.equal('running');
      expect(await view('p2')).to.deep.include({ status: 'cancelled', completedAt: ms(AT('12:00')) });
    });

    it('gathers the pages of namespaced LISTs apart, however they interleave', async () => {
      indexer.onPodEvent({ type: 'PAGE', items: [running('a1', 'a')], first: true, namespace: 'a' });
      indexer.onPodEvent({ type: 'PAGE', items: [running('b1', 'b')], first: true, namespace: 'b' });
      indexer.onPodEvent({ type: 'PAGE', items: [running('a2', 'a')], first: false, namespace: 'a' });
      indexer.onPodEvent({ type: 'SYNC', items: [], paged: true, namespace: 'a' });
      indexer.onPodEvent({ type: 'SYNC', items: [], paged: true, namespace: 'b' });
      await indexer.flush();
      for (const id of ['a1', 'a2', 'b1']) expect((await view(id))?.status, id).to.equal('running');
    });
  });

  describe('flush', () => {
    it('writes each batch with one call per table, the last version of a workload winning', async () => {
      const running = (rv: string, hour: string) =>
        aPod({ metadata: { uid: 'pod-1', resourceVersion: rv }, status: { phase: 'Running', startTime: AT(hour) } });
      podEvent('ADDED', running('1', '10:00'));
      podEvent('MODIFIED', running('2', '10:30'));
      podEvent('ADDED', aPod({ metadata: { uid: 'pod-2' } }));
      podEvent('MODIFIED', running('2', '10:45')); // same resourceVersion: a resync, skipped
      expect(sink.calls.rows).to.deep.equal([]);
      await indexer.flush();
      expect(sink.calls).to.deep.equal({ rows: [2], intervals: [2] });
      expect((await view('pod-1'))?.startedAt).to.equal(ms(AT('10:30')));
      await indexer.flush();
      expect(sink.calls.rows).to.have.length(1);
      expect(indexer.stats()).to.deep.include({ events: 4, flushes: 1, rowsFlushed: 2, rowsWritten: 2 });
    });

    it('finishes a batch half written in steps, then writes what was queued meanwhile, and counts both in stats()', async () => {
      podEvent('ADDED', runningPod('p1'));
      podEvent('ADDED', runningPod('p2'));
      expect(await indexer.writeStep(1)).to.equal(false); // p1's row written; p2's row and both intervals staged
      podEvent('ADDED', runningPod('p3')); // queued behind the staged batch
      await indexer.flush();
      expect(indexer.pending).to.equal(0);
      expect(sink.calls).to.deep.equal({ rows: [1, 1, 1], intervals: [2, 1] });
      for (const uid of ['p1', 'p2', 'p3']) expect((await view(uid))?.status, uid).to.equal('running');
      expect(indexer.stats()).to.deep.include({ flushes: 2, rowsFlushed: 3, rowsWritten: 3, intervalsFlushed: 3, intervalsWritten: 3 });
    });

    it('keeps a batch whose write failed for the next flush', async () => {
      const failing: WorkloadSink = { ...sink, upsertWorkloads: () => { throw new Error('disk full'); } };
      const broken = new WorkloadIndexer(failing, { clusterId: 'local', defaultOrganizationId: 'default-org', clock, logger });
      broken.onPodEvent({ type: 'ADDED', object: aPod({ metadata: { uid: 'pod-1' } }) });
      expect((await rejectionOf(broken.flush())).message).to.equal('disk full');
      expect(broken.pending).to.equal(2);
    });

    const runningPod = (uid: string) => aPod({ metadata: { uid, resourceVersion: '1' }, status: { phase: 'Running', startTime: AT('10:00') } });

    it('writes in steps of at most the budget: every row first, then the intervals', async () => {
      for (const uid of ['p1', 'p2', 'p3']) podEvent('ADDED', runningPod(uid));
      expect(await indexer.writeStep(2)).to.equal(false);
      expect(sink.calls).to.deep.equal({ rows: [2], intervals: [] });
      expect(await view('p3')).to.equal(undefined);
      expect(await indexer.writeStep(2)).to.equal(false);
      expect(sink.calls).to.deep.equal({ rows: [2, 1], intervals: [1] });
      expect(await indexer.writeStep(2)).to.equal(true);
      expect(sink.calls).to.deep.equal({ rows: [2, 1], intervals: [1, 2] });
      for (const uid of ['p1', 'p2', 'p3']) expect(await view(uid, ms(AT('11:00'))), uid).to.deep.include({ status: 'running', gpuHoursUsed: 1 });
      expect(indexer.pending).to.equal(0);
    });

    it('leaves events that arrive during a stepped write for the next one', async () => {
      podEvent('ADDED', runningPod('p1'));
      podEvent('ADDED', runningPod('p2'));
      expect(await indexer.writeStep(1)).to.equal(false);
      podEvent('ADDED', runningPod('p3'));
      expect(indexer.pending).to.equal(5); // staged: p2's row and both intervals; queued: p3's row and interval
      while (!(await indexer.writeStep(1)));
      expect(indexer.pending).to.equal(2);
      expect(await indexer.writeStep(10)).to.equal(true);
      expect(indexer.pending).to.equal(0);
    });

    it('says the snapshots are written only once everything a LIST led to is in the store', async () => {
      expect(indexer.snapshotsWritten).to.equal(true);
      indexer.onPodEvent({ type: 'SYNC', items: [runningPod('p1'), runningPod('p2')] });
      expect(indexer.snapshotsWritten).to.equal(false);
      expect(await indexer.writeStep(1)).to.equal(false);
      expect(indexer.snapshotsWritten).to.equal(false);
      podEvent('ADDED', runningPod('p3')); // a watch event after the LIST: not part of the snapshot
      while (!(await indexer.writeStep(1)));
      expect(indexer.snapshotsWritten).to.equal(true);
      expect(indexer.pending).to.equal(2);
    });

    it('cancels, on a relist, workloads that were queued or half written but not in the store yet', async () => {
      for (const uid of ['p1', 'p2', 'p3']) podEvent('ADDED', runningPod(uid));
      await indexer.writeStep(1); // p1 written; p2 and p3 only staged
      podEvent('ADDED', runningPod('p4')); // queued
      clock.set(AT('12:00'));
      indexer.onPodEvent({ type: 'SYNC', items: [runningPod('p2')] });
      await indexer.flush();
      for (const uid of ['p1', 'p3', 'p4']) expect(await view(uid), uid).to.deep.include({ status: 'cancelled', completedAt: ms(AT('12:00')) });
      expect((await view('p2'))?.status).to.equal('running');
    });
  });
});
