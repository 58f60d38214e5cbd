import { rejectionOf } from '../../support/rejection.js';
import { expect } from 'chai';
import { openTestIndex, type ClusterWriter, type TestIndex } from '../../support/test-index.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { ADMIN, at, HOUR_MS, inOrg } from '../temp-store.js';

// The writes of a cluster's writer (the indexer's port) on the test backend, read back through the
// read side, and retention's deletes.
describe('store/workload-store writes', () => {
  let t: TestIndex;
  /** Cluster local's writer, the one the rows of aWorkload() belong to. */
  let w: ClusterWriter;
  beforeEach(async () => {
    t = await openTestIndex({ clock: { now: () => at('2026-11-20T00:00:00Z') } });
    w = await t.writer('local');
  });
  afterEach(() => t.close());

  describe('upsertWorkloads', () => {
    it('inserts new rows and reads every field back', async () => {
      const job = aWorkload();
      const pod = aWorkload({
        kind: 'Pod', status: 'running', completedAt: null, exitCode: null, isManaged: false, resourceVersion: '',
      });
      const pending = aWorkload({ status: 'pending', startedAt: null, completedAt: null, exitCode: null });
      expect(await w.upsertWorkloads([job, pod, pending])).to.equal(3);
      expect(await t.countRows()).to.equal(3);

      for (const record of [job, pod, pending]) {
        const view = await t.index.get(record.workloadId, at('2026-11-20T00:00:00Z'));
        expect(view).to.deep.include(record);
      }
    });

    it('returns 0 and writes nothing for an empty batch', async ()  => {
      expect(await w.upsertWorkloads([])).to.equal(0);
    });

    it('updates a row whose resourceVersion changed', async () => {
      const running = aWorkload({ status: 'running', completedAt: null, exitCode: null, resourceVersion: '10' });
      await w.upsertWorkloads([running]);
      const done = { ...running, status: 'failed' as const, completedAt: at('2026-11-10T11:00:00Z'), exitCode: 137, resourceVersion: '11' };
      expect(await w.upsertWorkloads([done])).to.equal(1);
      expect(await t.index.get(running.workloadId, 0)).to.deep.include(done);
    });

    it('skips a row whose resourceVersion and content are unchanged', async ()  => {
      const records = [aWorkload({ resourceVersion: '5' }), aWorkload({ resourceVersion: '6' })];
      await w.upsertWorkloads(records);
      expect(await w.upsertWorkloads(records.map((r) => ({ ...r })))).to.equal(0);
    });

    it('rewrites a row whose resourceVersion is unchanged when a field from its Namespace or Node changed', async () => {
      const record = aWorkload({ resourceVersion: '5' });
      await w.upsertWorkloads([record]);
      const relabelled = { ...record, initiativeId: 'vision', instanceType: 'a3-highgpu-8g' };
      expect(await w.upsertWorkloads([relabelled])).to.equal(1);
      expect((await t.index.get(record.workloadId, 0))?.initiativeId).to.equal('vision');
    });

    it('keeps a known instance type when the workload is mapped again without a node (its pods and node are gone)', async () => {
      const finished = aWorkload({ resourceVersion: '7', instanceType: 'p5.48xlarge' });
      await w.upsertWorkloads([finished]);
      // After a restart or a relist, the Job maps with no pod left to name a node.
      expect(await w.upsertWorkloads([{ ...finished, instanceType: 'unknown' }]), 'nothing to write').to.equal(0);
      expect(await w.upsertWorkloads([{ ...finished, instanceType: 'unknown', resourceVersion: '8', initiativeId: 'vision' }])).to.equal(1);
      const view = await t.index.get(finished.workloadId, 0);
      expect(view).to.include({ instanceType: 'p5.48xlarge', initiativeId: 'vision' });
      // A node that says otherwise still wins.
      await w.upsertWorkloads([{ ...finished, instanceType: 'a3-highgpu-8g', resourceVersion: '9' }]);
      expect((await t.index.get(finished.workloadId, 0))?.instanceType).to.equal('a3-highgpu-8g');
    });

    it('always rewrites rows that do not come from Kubernetes (empty resourceVersion)', async ()  => {
      const record = aWorkload({ resourceVersion: '' });
      await w.upsertWorkloads([record]);
      expect(await w.upsertWorkloads([record])).to.equal(1);
    });

    it('rolls the whole batch back when one row is invalid', async () => {
      const good = aWorkload();
      const bad = aWorkload({ gpuCount: 1.5 });
      await rejectionOf(w.upsertWorkloads([good, bad]));
      expect(await t.countRows()).to.equal(0);
    });

    it('keeps the submission time first written (a fallback from the time observed differs between replicas)', async () => {
      const record = aWorkload({ resourceVersion: '1' });
      await w.upsertWorkloads([record]);
      expect(await w.upsertWorkloads([{ ...record, submittedAt: record.submittedAt + 5000 }]), 'nothing else changed').to.equal(0);
      await w.upsertWorkloads([{ ...record, submittedAt: record.submittedAt + 5000, name: 'renamed', resourceVersion: '2' }]);
      expect(await t.index.get(record.workloadId, 0)).to.include({ submittedAt: record.submittedAt, name: 'renamed' });
    });

    it('keeps a finished row finished: an older event showing it pending or running changes neither its status, times, exit code nor resourceVersion, its labels still', async () => {
      const done = aWorkload({ status: 'failed', exitCode: 3, resourceVersion: '9' });
      await w.upsertWorkloads([done]);
      const running = { ...done, status: 'running' as const, completedAt: null, exitCode: null, resourceVersion: '7' };
      expect(await w.upsertWorkloads([running]), 'a replay changes nothing').to.equal(0);
      const pending = { ...done, status: 'pending' as const, startedAt: null, completedAt: null, exitCode: null, resourceVersion: '5' };
      await w.upsertWorkloads([{ ...pending, initiativeId: 'vision', instanceType: 'a3-highgpu-8g' }]);
      expect(await t.index.get(done.workloadId, 0)).to.deep.include({ ...done, initiativeId: 'vision', instanceType: 'a3-highgpu-8g' });
      const stats = await t.index.stats(inOrg(), 'initiative_id', at('2026-11-20T00:00:00Z'));
      expect(stats.groups.map((g) => [g.key, g.workloadCount, g.successRate])).to.deep.equal([['vision', 1, 0]]);
    });

    it('still takes a terminal event over a terminal row: a pod cancelled by its deletion gets its exit code once its containers stop', async () => {
      const marked = aWorkload({ kind: 'Pod', status: 'cancelled', exitCode: 0, resourceVersion: '4' });
      await w.upsertWorkloads([marked]);
      expect(await w.upsertWorkloads([{ ...marked, exitCode: 137, resourceVersion: '5' }])).to.equal(1);
      expect((await t.index.get(marked.workloadId, 0))?.exitCode).to.equal(137);
      // Containers that stopped before the deletion request: the pod failed on its own.
      await w.upsertWorkloads([{ ...marked, status: 'failed', exitCode: 1, resourceVersion: '6' }]);
      expect(await t.index.get(marked.workloadId, 0)).to.include({ status: 'failed', exitCode: 1 });
    });

    it('keeps the GPU-hour aggregates when the row itself is updated', async () => {
      const record = aWorkload({ resourceVersion: '1' });
      await w.upsertWorkloads([record]);
      await w.upsertPodIntervals([aPodInterval(record)]);
      await w.upsertWorkloads([{ ...record, name: 'renamed', resourceVersion: '2' }]);
      expect((await t.index.get(record.workloadId, 0))?.gpuHoursUsed).to.be.closeTo(16, 1e-9);
    });
  });

  describe('upsertPodIntervals and GPU-hours', () => {
    const now = at('2026-11-10T14:01:00Z');

    it('counts a finished pod as gpus × its running hours', async () => {
      const record = aWorkload({ gpuCount: 8 }); // runs 10:01 → 12:01
      await w.upsertWorkloads([record]);
      expect(await w.upsertPodIntervals([aPodInterval(record)])).to.equal(1);
      expect((await t.index.get(record.workloadId, now))?.gpuHoursUsed).to.be.closeTo(16, 1e-9);
    });

    it('counts a running pod up to now', async () => {
      const record = aWorkload({ gpuCount: 4, status: 'running', completedAt: null, exitCode: null });
      await w.upsertWorkloads([record]);
      await w.upsertPodIntervals([aPodInterval(record)]);
      const view = await t.index.get(record.workloadId, now); // 10:01 → 14:01
      expect(view?.gpuHoursUsed).to.be.closeTo(16, 1e-9);
      expect(view?.durationSeconds).to.equal(4 * 3600);
      expect((await t.index.get(record.workloadId, now + HOUR_MS))?.gpuHoursUsed).to.be.closeTo(20, 1e-9);
    });

    it('sums the pods of a Job: parallel pods and a retried pod each count for their own time', async () => {
      const job = aWorkload({ gpuCount: 4, status: 'running', completedAt: null, exitCode: null });
      await w.upsertWorkloads([job]);
      await w.upsertPodIntervals([
        // first attempt failed after 30 min, its retry is still running; a parallel pod ran 1 h
        aPodInterval(job, { podUid: 'a-0', gpus: 2, startedAt: at('2026-11-10T10:00:00Z'), finishedAt: at('2026-11-10T10:30:00Z') }),
        aPodInterval(job, { podUid: 'a-1', gpus: 2, startedAt: at('2026-11-10T11:00:00Z'), finishedAt: null }),
        aPodInterval(job, { podUid: 'b-0', gpus: 2, startedAt: at('2026-11-10T10:00:00Z'), finishedAt: at('2026-11-10T11:00:00Z') }),
        aPodInterval(job, { podUid: 'never-started', gpus: 2, startedAt: null, finishedAt: null }),
      ]);
      // 2 × 0.5 + 2 × 3 (11:00 → 14:00) + 2 × 1
      expect((await t.index.get(job.workloadId, at('2026-11-10T14:00:00Z')))?.gpuHoursUsed).to.be.closeTo(9, 1e-9);
    });

    it('stops counting at completion: a finished workload never grows, even with a pod left open', async () => {
      const record = aWorkload({ gpuCount: 2 }); // completed 12:01
      await w.upsertWorkloads([record]);
      await w.upsertPodIntervals([aPodInterval(record, { finishedAt: null })]);
      const later = await t.index.get(record.workloadId, at('2026-12-01T00:00:00Z'));
      expect(later?.gpuHoursUsed).to.be.closeTo(4, 1e-9);
      expect(later?.durationSeconds).to.equal(2 * 3600);
    });

    it('refreshes the aggregates when a running pod finishes', async () => {
      const record = aWorkload({ gpuCount: 8, status: 'running', completedAt: null, exitCode: null });
      await w.upsertWorkloads([record]);
      await w.upsertPodIntervals([aPodInterval(record)]);
      await w.upsertPodIntervals([aPodInterval(record, { finishedAt: at('2026-11-10T11:01:00Z') })]);
      expect((await t.index.get(record.workloadId, now))?.gpuHoursUsed).to.be.closeTo(8, 1e-9);
    });

    it('does not rewrite an unchanged interval', async ()  => {
      const record = aWorkload();
      await w.upsertWorkloads([record]);
      await w.upsertPodIntervals([aPodInterval(record)]);
      expect(await w.upsertPodIntervals([aPodInterval(record)])).to.equal(0);
    });

    it('skips intervals of workloads not in the index yet and keeps the rest of the batch', async () => {
      const known = aWorkload();
      await w.upsertWorkloads([known]);
      const unknown = aWorkload();
      expect(await w.upsertPodIntervals([aPodInterval(unknown), aPodInterval(known)])).to.equal(1);
      expect((await t.index.get(known.workloadId, now))?.gpuHoursUsed).to.be.closeTo(16, 1e-9);
    });

    describe('a pod moved to another workload', () => {
      const hoursOf = async (workloadId: string) => (await t.index.get(workloadId, now))?.gpuHoursUsed;

      it('stops counting for the workload it left and counts for the one it joined, in every figure', async () => {
        const left = aWorkload({ gpuCount: 8 }); // 10:01 → 12:01
        const joined = aWorkload({ gpuCount: 8 });
        await w.upsertWorkloads([left, joined]);
        await w.upsertPodIntervals([aPodInterval(left)]);

        expect(await w.upsertPodIntervals([aPodInterval(left, { workloadId: joined.workloadId })])).to.equal(1);

        expect(await hoursOf(left.workloadId)).to.equal(0);
        expect(await hoursOf(joined.workloadId)).to.be.closeTo(16, 1e-9);
        expect((await t.index.stats(inOrg(), null, now)).summary.gpuHours).to.be.closeTo(16, 1e-9);
        const ranking = await t.index.rankByGpuHours(inOrg(), { order: 'desc', limit: 2, now });
        expect(ranking.entries.map((e) => [e.workloadId, e.gpuHours])).to.deep.equal([[joined.workloadId, 16], [left.workloadId, 0]]);
        expect((await t.index.usage(inOrg(), { from: null, to: now })).total).to.be.closeTo(16, 1e-9);
      });

      it('refreshes every workload a pod passed through within one batch', async () => {
        const [first, second, third] = [aWorkload(), aWorkload(), aWorkload()];
        await w.upsertWorkloads([first, second, third]);
        await w.upsertPodIntervals([aPodInterval(first)]);

        await w.upsertPodIntervals([
          aPodInterval(first, { workloadId: second.workloadId }),
          aPodInterval(first, { workloadId: third.workloadId }),
        ]);

        expect(await hoursOf(first.workloadId)).to.equal(0);
        expect(await hoursOf(second.workloadId)).to.equal(0);
        expect(await hoursOf(third.workloadId)).to.be.closeTo(16, 1e-9);
      });

      it('keeps the pod and its hours where they were when the new workload is not in the index yet', async () => {
        const known = aWorkload();
        await w.upsertWorkloads([known]);
        await w.upsertPodIntervals([aPodInterval(known)]);

        expect(await w.upsertPodIntervals([aPodInterval(known, { workloadId: 'not-indexed-yet' })])).to.equal(0);

        expect(await hoursOf(known.workloadId)).to.be.closeTo(16, 1e-9);
      });
    });

    it('reports 0 GPU-hours for a workload with no pod interval', async () => {
      const record = aWorkload();
      await w.upsertWorkloads([record]);
      expect((await t.index.get(record.workloadId, now))?.gpuHoursUsed).to.equal(0);
    });
  });

  describe('closeOpenIntervals', () => {
    const running = (overrides: Parameters<typeof aWorkload>[0] = {}) =>
      aWorkload({ gpuCount: 2, status: 'running', startedAt: at('2026-11-10T10:00:00Z'), completedAt: null, exitCode: null, ...overrides });
    const openPods = async (workloadId: string) =>
      (await t.sql('SELECT pod_uid FROM workload_pods WHERE workload_id = ? AND finished_at IS NULL ORDER BY pod_uid', [workloadId])).map((row) => row.pod_uid);
    const finishOf = async (podUid: string) => (await t.sql('SELECT finished_at FROM workload_pods WHERE pod_uid = ?', [podUid]))[0]?.finished_at;
    const noon = at('2026-11-10T12:00:00Z');

    it('ends the open intervals of the given workloads at `at` and returns how many it closed', async () => {
      const job = running();
      const other = running();
      await w.upsertWorkloads([job, other]);
      await w.upsertPodIntervals([
        aPodInterval(job, { podUid: 'a', finishedAt: null }),
        aPodInterval(job, { podUid: 'b', finishedAt: null }),
        aPodInterval(job, { podUid: 'done', finishedAt: at('2026-11-10T11:00:00Z') }),
        aPodInterval(job, { podUid: 'never-started', startedAt: null, finishedAt: null }),
        aPodInterval(other, { podUid: 'elsewhere', finishedAt: null }),
      ]);

      expect(await w.closeOpenIntervals([job.workloadId, 'unknown'], noon)).to.equal(3);

      expect(await openPods(job.workloadId)).to.deep.equal([]);
      expect([await finishOf('a'), await finishOf('b'), await finishOf('done')]).to.deep.equal([noon, noon, at('2026-11-10T11:00:00Z')]);
      expect(await openPods(other.workloadId)).to.deep.equal(['elsewhere']);
    });

    it('stops the GPU-hours of a workload still marked running from growing, in every figure', async () => {
      const job = running();
      await w.upsertWorkloads([job]);
      await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: null }), aPodInterval(job, { podUid: 'b', finishedAt: null })]);

      await w.closeOpenIntervals([job.workloadId], noon);

      const later = at('2026-11-20T00:00:00Z');
      expect((await t.index.get(job.workloadId, later))?.gpuHoursUsed).to.be.closeTo(2 * 2 * 2, 1e-9);
      expect((await t.index.stats(inOrg(), null, later)).summary.gpuHours).to.be.closeTo(8, 1e-9);
      expect((await t.index.usage(inOrg(), { from: null, to: later })).total).to.be.closeTo(8, 1e-9);
      expect((await t.index.usage(inOrg(), { from: noon, to: later })).total).to.equal(0);
    });

    it('returns 0 and changes nothing for an empty list or workloads without open intervals', async ()  => {
      const done = aWorkload();
      await w.upsertWorkloads([done]);
      await w.upsertPodIntervals([aPodInterval(done)]);
      expect(await w.closeOpenIntervals([], noon)).to.equal(0);
      expect(await w.closeOpenIntervals([done.workloadId], noon)).to.equal(0);
      expect(await finishOf(`${done.workloadId}-pod-0`)).to.equal(done.completedAt);
    });

    it('keeps an interval closed when a later upsert shows its pod running after its workload finished', async () => {
      const job = running();
      await w.upsertWorkloads([job]);
      await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: null })]);
      await w.upsertWorkloads([{ ...job, status: 'cancelled', completedAt: noon, exitCode: 0, resourceVersion: '' }]);
      await w.closeOpenIntervals([job.workloadId], noon);

      expect(await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: null })])).to.equal(0);

      expect(await finishOf('a')).to.equal(noon);
      expect((await t.index.get(job.workloadId, at('2026-11-20T00:00:00Z')))?.gpuHoursUsed).to.be.closeTo(4, 1e-9);
    });

    it('takes a pod\'s own later end over the time its interval was closed at (the GPUs are held through the grace period)', async () => {
      const job = running();
      await w.upsertWorkloads([job]);
      await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: null })]);
      await w.upsertWorkloads([{ ...job, status: 'cancelled', completedAt: noon, exitCode: 0, resourceVersion: '' }]);
      // Marked for deletion at noon, the pod ends there until its containers stop 30 s later.
      await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: noon })]);
      expect(await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: noon + 30_000 })])).to.equal(1);
      expect(await finishOf('a')).to.equal(noon + 30_000);
    });

    it('still takes a later finish time, and an open interval while the workload is unfinished', async ()  => {
      const job = running();
      await w.upsertWorkloads([job]);
      await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: null })]);
      await w.closeOpenIntervals([job.workloadId], noon);

      // Unfinished: Kubernetes has the last word (the pod runs).
      expect(await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: null })])).to.equal(1);
      expect(await finishOf('a')).to.equal(null);

      await w.upsertWorkloads([{ ...job, status: 'cancelled', completedAt: noon, exitCode: 0, resourceVersion: '' }]);
      const podGone = at('2026-11-10T12:05:00Z');
      expect(await w.upsertPodIntervals([aPodInterval(job, { podUid: 'a', finishedAt: podGone })])).to.equal(1);
      expect(await finishOf('a')).to.equal(podGone);
    });
  });

  describe('get', () => {
    it('returns undefined for an unknown workload', async () => {
      expect(await t.index.get('nope', 0)).to.equal(undefined);
    });

    it('returns a workload of any organization (the caller checks the scope)', async () => {
      const other = aWorkload({ organizationId: 'globex' });
      await w.upsertWorkloads([other]);
      expect((await t.index.get(other.workloadId, 0))?.organizationId).to.equal('globex');
    });

    it('gives duration 0 before the start and whole seconds after', async () => {
      const pending = aWorkload({ status: 'pending', startedAt: null, completedAt: null, exitCode: null });
      const running = aWorkload({ status: 'running', startedAt: at('2026-11-10T10:00:00Z'), completedAt: null, exitCode: null });
      await w.upsertWorkloads([pending, running]);
      expect((await t.index.get(pending.workloadId, at('2026-11-11T00:00:00Z')))?.durationSeconds).to.equal(0);
      expect((await t.index.get(running.workloadId, at('2026-11-10T10:00:01.999Z')))?.durationSeconds).to.equal(1);
    });
  });

  describe('deleteFinishedBatch', () => {
    const cutoff = at('2026-11-01T00:00:00Z');

    it('deletes only finished rows completed before the cutoff, with their pod intervals', async ()  => {
      const old = ['completed', 'failed', 'cancelled'].map((status) =>
        aWorkload({ status: status as 'completed', completedAt: at('2026-10-01T00:00:00Z') }));
      const recent = aWorkload({ completedAt: at('2026-11-01T00:00:00Z') });
      const oldRunning = aWorkload({ status: 'running', submittedAt: at('2025-01-01T00:00:00Z'), completedAt: null, exitCode: null });
      await w.upsertWorkloads([...old, recent, oldRunning]);
      await w.upsertPodIntervals([...old, recent, oldRunning].map((r) => aPodInterval(r)));

      expect(await t.seed.deleteFinishedBatch(cutoff, 100)).to.equal(3);
      const left = (await t.sql('SELECT workload_id FROM workloads ORDER BY workload_id')).map((row) => row.workload_id);
      expect(left).to.deep.equal([recent.workloadId, oldRunning.workloadId].sort());
      const pods = (await t.sql('SELECT workload_id FROM workload_pods ORDER BY workload_id')).map((row) => row.workload_id);
      expect(pods).to.deep.equal(left);
    });

    it('deletes at most `limit` rows per call, and fewer once nothing expired is left', async ()  => {
      const old = Array.from({ length: 11 }, () => aWorkload({ completedAt: at('2026-10-01T00:00:00Z') }));
      await w.upsertWorkloads(old);
      const batches: number[] = [];
      for (let i = 0; i < 5; i++) batches.push(await t.seed.deleteFinishedBatch(cutoff, 3));
      expect(batches).to.deep.equal([3, 3, 3, 2, 0]);
      expect(await t.countRows()).to.equal(0);
    });

    it('rejects a limit that is not a positive integer', async () => {
      for (const limit of [0, -1, 2.5, Number.NaN]) {
        expect((await rejectionOf(t.seed.deleteFinishedBatch(cutoff, limit))).message, String(limit)).to.match(/"limit" must be a positive integer/);
      }
    });
  });

  describe('listUnfinished', () => {
    it('returns the pending and running workloads of one cluster', async ()  => {
      const running = aWorkload({ status: 'running', completedAt: null, exitCode: null });
      const pending = aWorkload({ status: 'pending', startedAt: null, completedAt: null, exitCode: null });
      const elsewhere = aWorkload({ status: 'running', clusterId: 'remote', completedAt: null, exitCode: null });
      await w.upsertWorkloads([running, pending, elsewhere, aWorkload()]);
      const ids = w.listUnfinished('local').map((r) => r.workloadId);
      expect(ids).to.have.members([running.workloadId, pending.workloadId]);
    });
  });

  it('computes the same GPU-hours in SQL (stats, ranking) as in get', async () => {
    const running = aWorkload({ gpuCount: 3, status: 'running', startedAt: at('2026-11-10T10:00:00.123Z'), completedAt: null, exitCode: null });
    await w.upsertWorkloads([running]);
    await w.upsertPodIntervals([aPodInterval(running), aPodInterval(running, { podUid: 'x', gpus: 1, finishedAt: at('2026-11-10T10:17:00.456Z') })]);
    const now = at('2026-11-10T13:33:33.333Z');
    const view = await t.index.get(running.workloadId, now);
    if (view === undefined) throw new Error('The workload was not stored');
    const stats = await t.index.stats(inOrg(), null, now);
    const ranking = await t.index.rankByGpuHours({ scope: ADMIN }, { order: 'desc', limit: 1, now });
    expect(stats.summary.gpuHours).to.be.closeTo(view.gpuHoursUsed, 1e-9);
    expect(ranking.entries[0]?.gpuHours).to.be.closeTo(view.gpuHoursUsed, 1e-9);
    // Statistics average milliseconds (a rollup can hold them), the view shows whole seconds.
    expect(stats.summary.averageDurationSeconds).to.be.closeTo(view.durationSeconds, 1);
    expect(stats.summary.averageDurationSeconds).to.equal((now - (running.startedAt ?? 0)) / 1000);
  });
});
