// queue_percentiles on GET /v1/workloads/stats through the real service: the nearest-rank percentile
// of the workloads' queue_seconds, in the summary and each group, pending ones up to now, scoped
// like every figure, and nothing added when not asked.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const at = (iso: string) => Date.parse(iso);
const SUBMITTED = at('2026-11-20T06:00:00Z');
const DAY = 'time_range=custom&start_date=2026-11-20T00:00:00Z&end_date=2026-11-21T00:00:00Z';

describe('API statistics queue_percentiles', () => {
  let t: TestService;
  const id = (team: string, n: number) => `qp${team === 'llm' ? '1' : '2'}00000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  // llm (alice): 20 workloads that waited 1 to 20 minutes, plus 0.999 s each, which whole seconds drop.
  const llm = Array.from({ length: 20 }, (_, i) =>
    aWorkload({ workloadId: id('llm', i + 1), initiativeId: 'llm', submittedBy: 'alice', submittedAt: SUBMITTED, startedAt: SUBMITTED + (i + 1) * 60_000 + 999, completedAt: at('2026-11-20T09:00:00Z') }),
  );
  // vision (bob): two that ran after 10 and 30 s, one cancelled unstarted after 50 s, and one pending
  // since 11:00, whose wait grows with the clock.
  const vision = [
    aWorkload({ workloadId: id('vision', 1), initiativeId: 'vision', submittedBy: 'bob', submittedAt: SUBMITTED, startedAt: SUBMITTED + 10_000, completedAt: at('2026-11-20T07:00:00Z') }),
    aWorkload({ workloadId: id('vision', 2), initiativeId: 'vision', submittedBy: 'bob', submittedAt: SUBMITTED, startedAt: SUBMITTED + 30_000, completedAt: at('2026-11-20T07:00:00Z') }),
    aWorkload({ workloadId: id('vision', 3), initiativeId: 'vision', submittedBy: 'bob', status: 'cancelled', submittedAt: SUBMITTED, startedAt: null, completedAt: SUBMITTED + 50_000, exitCode: null }),
    aWorkload({ workloadId: id('vision', 4), initiativeId: 'vision', submittedBy: 'bob', status: 'pending', submittedAt: at('2026-11-20T11:00:00Z'), startedAt: null, completedAt: null, exitCode: null }),
  ];

  before(async () => {
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads([...llm, ...vision]);
  });
  after(() => t.stop());

  const stats = async (query: string, as = t.callers.admin) => {
    const res = await t.get(`/v1/workloads/stats?${query}`, { as });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };
  const percentilesOf = (figures: Record<string, unknown>) => Object.fromEntries(Object.entries(figures).filter(([key]) => /^p\d+_queue_seconds$/.test(key)));

  it('gives the summary and each group the nearest-rank percentiles of queue_seconds', async () => {
    const data = await stats(`${DAY}&group_by=initiative_id&queue_percentiles=50,95,99`);
    // All 24 waits in seconds: 10, 30, 50, 60 … 1,200, 3,600 (pending). Ranks ⌈p × 24 / 100⌉: 12, 23, 24.
    expect(percentilesOf(data.summary)).to.deep.equal({ p50_queue_seconds: 540, p95_queue_seconds: 1200, p99_queue_seconds: 3600 });
    const groups = Object.fromEntries(data.grouped.map((g: { initiative_id: string }) => [g.initiative_id, percentilesOf(g)]));
    // llm, 20 waits: ranks 10, 19, 20. vision, 4 waits: ranks 2, 4, 4.
    expect(groups).to.deep.equal({
      llm: { p50_queue_seconds: 600, p95_queue_seconds: 1140, p99_queue_seconds: 1200 },
      vision: { p50_queue_seconds: 30, p95_queue_seconds: 3600, p99_queue_seconds: 3600 },
    });
  });

  it('is the queue_seconds of one of the workloads counted', async () => {
    const data = await stats(`${DAY}&queue_percentiles=75`);
    const waits = await Promise.all([...llm, ...vision].map(async (w) => (await t.get(`/v1/workloads/${w.workloadId}`)).body.data.queue_seconds as number));
    const sorted = waits.sort((a, b) => a - b);
    expect(data.summary.p75_queue_seconds).to.equal(sorted[Math.ceil((75 * sorted.length) / 100) - 1]);
  });

  it('lets a pending wait grow with the clock', async () => {
    t.clock.set('2026-11-20T13:00:00Z');
    try {
      const data = await stats(`${DAY}&group_by=initiative_id&queue_percentiles=99`);
      expect(data.summary.p99_queue_seconds).to.equal(7200);
    } finally {
      t.clock.set('2026-11-20T12:00:00Z');
    }
  });

  it('counts only the caller\'s teams', async () => {
    const data = await stats(`${DAY}&group_by=submitted_by&queue_percentiles=50`, t.callers.member);
    expect(percentilesOf(data.summary)).to.deep.equal({ p50_queue_seconds: 30 });
    expect(data.grouped.map((g: { submitted_by: string; p50_queue_seconds: number }) => [g.submitted_by, g.p50_queue_seconds])).to.deep.equal([['bob', 30]]);
  });

  it('groups by failure reason, the group without one keyed null', async () => {
    const data = await stats(`${DAY}&group_by=failure_reason&queue_percentiles=95`);
    const groups = Object.fromEntries(data.grouped.map((g: { failure_reason: string | null; p95_queue_seconds: number }) => [String(g.failure_reason), g.p95_queue_seconds]));
    // The 23 that did not fail: rank ⌈0.95 × 23⌉ = 22 of 10, 30, 60 … 1,200, 3,600.
    expect(groups).to.deep.equal({ null: 1200, deleted: 50 });
  });

  it('is null over a range without workloads', async () => {
    const data = await stats('time_range=custom&start_date=2026-11-10T00:00:00Z&end_date=2026-11-11T00:00:00Z&group_by=instance_type&queue_percentiles=95');
    expect(data.summary.p95_queue_seconds).to.equal(null);
    expect(data.grouped).to.deep.equal([]);
    const ungrouped = await stats('time_range=custom&start_date=2026-11-10T00:00:00Z&end_date=2026-11-11T00:00:00Z&queue_percentiles=50,99');
    expect(percentilesOf(ungrouped.summary)).to.deep.equal({ p50_queue_seconds: null, p99_queue_seconds: null });
  });

  it('adds nothing when not asked', async () => {
    const data = await stats(`${DAY}&group_by=initiative_id`);
    expect(percentilesOf(data.summary)).to.deep.equal({});
    for (const group of data.grouped) expect(percentilesOf(group)).to.deep.equal({});
  });

  for (const bad of ['95,50', '95,95', '96', '95, 99', '']) {
    it(`refuses queue_percentiles=${JSON.stringify(bad)} with a VALIDATION_ERROR naming the parameter`, async () => {
      const res = await t.get(`/v1/workloads/stats?queue_percentiles=${encodeURIComponent(bad)}`);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error)).to.contain('queue_percentiles');
    });
  }
});
