// queue_seconds through the real service: from submission to start, to the end for a workload that
// never started, and growing with the clock for one still pending.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const at = (iso: string) => Date.parse(iso);

describe('API workload queue_seconds', () => {
  let t: TestService;
  const started = aWorkload({ workloadId: 'qe000000-0000-4000-8000-000000000001', submittedAt: at('2026-11-20T09:00:00Z'), startedAt: at('2026-11-20T09:12:34.900Z'), completedAt: at('2026-11-20T10:00:00Z') });
  const neverStarted = aWorkload({
    workloadId: 'qe000000-0000-4000-8000-000000000002',
    status: 'cancelled',
    submittedAt: at('2026-11-20T08:00:00Z'),
    startedAt: null,
    completedAt: at('2026-11-20T08:45:00Z'),
    exitCode: null,
  });
  const pending = aWorkload({ workloadId: 'qe000000-0000-4000-8000-000000000003', status: 'pending', submittedAt: at('2026-11-20T11:30:00Z'), startedAt: null, completedAt: null, exitCode: null });
  // A clock skewed between the API server and the kubelet can put the start before the creation.
  const skewed = aWorkload({ workloadId: 'qe000000-0000-4000-8000-000000000004', submittedAt: at('2026-11-20T09:00:05Z'), startedAt: at('2026-11-20T09:00:00Z'), completedAt: at('2026-11-20T09:30:00Z') });

  before(async () => {
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads([started, neverStarted, pending, skewed]);
  });
  after(() => t.stop());

  const queueOf = async (id: string) => {
    const res = await t.get(`/v1/workloads/${id}`);
    expect(res.status).to.equal(200);
    return res.body.data.queue_seconds as number;
  };

  it('counts whole seconds from submission to start', async () => {
    expect(await queueOf(started.workloadId)).to.equal(12 * 60 + 34);
  });

  it('counts a workload that ended without starting until it ended', async () => {
    expect(await queueOf(neverStarted.workloadId)).to.equal(45 * 60);
  });

  it('counts a pending workload until now, and keeps counting', async () => {
    expect(await queueOf(pending.workloadId)).to.equal(30 * 60);
    t.clock.set('2026-11-20T12:10:00Z');
    try {
      expect(await queueOf(pending.workloadId)).to.equal(40 * 60);
    } finally {
      t.clock.set('2026-11-20T12:00:00Z');
    }
  });

  it('never goes below 0 when the start is stamped before the creation', async () => {
    expect(await queueOf(skewed.workloadId)).to.equal(0);
  });

  it('stays off the list items, which keep the contract\'s nine fields', async () => {
    const res = await t.get('/v1/workloads?limit=10');
    for (const item of res.body.data.workloads) expect(item).to.not.have.property('queue_seconds');
  });
});

// average_queue_seconds of statistics and series: the mean of each workload's exact wait in ms, over
// every workload counted; a whole day of the window comes from the daily rollup.
describe('API statistics average_queue_seconds', () => {
  let t: TestService;
  const id = (n: number) => `qs000000-0000-4000-8000-00000000000${n}`;
  const workloads = [
    // alice: 600.4 s to its start, and 2,700 s before it was cancelled unstarted.
    aWorkload({ workloadId: id(1), submittedBy: 'alice', submittedAt: at('2026-11-20T09:00:00Z'), startedAt: at('2026-11-20T09:10:00.400Z'), completedAt: at('2026-11-20T10:00:00Z') }),
    aWorkload({ workloadId: id(2), submittedBy: 'alice', status: 'cancelled', submittedAt: at('2026-11-20T08:00:00Z'), startedAt: null, completedAt: at('2026-11-20T08:45:00Z'), exitCode: null }),
    // bob: pending since 11:30, and a start stamped before the creation (0).
    aWorkload({ workloadId: id(3), submittedBy: 'bob', status: 'pending', submittedAt: at('2026-11-20T11:30:00Z'), startedAt: null, completedAt: null, exitCode: null }),
    aWorkload({ workloadId: id(4), submittedBy: 'bob', submittedAt: at('2026-11-20T09:00:05Z'), startedAt: at('2026-11-20T09:00:00Z'), completedAt: at('2026-11-20T09:30:00Z') }),
    // carol: pending, created 5 min after the service's now by a skewed clock: 0 until then.
    aWorkload({ workloadId: id(5), submittedBy: 'carol', status: 'pending', submittedAt: at('2026-11-20T12:05:00Z'), startedAt: null, completedAt: null, exitCode: null }),
  ];
  // The whole day of 2026-11-20: read from the daily rollup, not from the rows.
  const DAY = 'time_range=custom&start_date=2026-11-20T00:00:00Z&end_date=2026-11-21T00:00:00Z';

  before(async () => {
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
  });
  after(() => t.stop());

  const stats = async (query: string) => {
    const res = await t.get(`/v1/workloads/stats?${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };
  const bySubmitter = (data: { grouped: { submitted_by: string; average_queue_seconds: number }[] }) =>
    Object.fromEntries(data.grouped.map((g) => [g.submitted_by, g.average_queue_seconds]));

  it('averages the waits in the summary and in each group, pending ones up to now and never below 0', async () => {
    const data = await stats(`${DAY}&group_by=submitted_by`);
    expect(data.summary.average_queue_seconds).to.equal(1020.08); // (600.4 + 2,700 + 1,800 + 0 + 0) / 5
    expect(bySubmitter(data)).to.deep.equal({ alice: 1650.2, bob: 900, carol: 0 });
  });

  it('lets the pending waits grow with the clock', async () => {
    t.clock.set('2026-11-20T12:10:00Z');
    try {
      const data = await stats(`${DAY}&group_by=submitted_by`);
      expect(data.summary.average_queue_seconds).to.equal(1200.08); // (600.4 + 2,700 + 2,400 + 0 + 300) / 5
      expect(bySubmitter(data)).to.deep.equal({ alice: 1650.2, bob: 1200, carol: 300 });
    } finally {
      t.clock.set('2026-11-20T12:00:00Z');
    }
  });

  it('gives each series entry its own average, and the same over part of a day from the rows', async () => {
    const series = (await stats(`${DAY}&interval=day`)).series;
    expect(series.map((e: { average_queue_seconds: number }) => e.average_queue_seconds)).to.deep.equal([1020.08]);
    // From 08:30: the cancelled one (submitted 08:00) is out; the part of the day is read from the rows.
    const morning = await stats('time_range=custom&start_date=2026-11-20T08:30:00Z&end_date=2026-11-21T00:00:00Z');
    expect(morning.summary.average_queue_seconds).to.equal(600.1); // (600.4 + 1,800 + 0 + 0) / 4
  });
});
