// sort_by=queue_seconds on GET /v1/workloads/metrics through the real service: workloads by their wait
// from submission to start (whole seconds, as GET /v1/workloads/{id} shows it), pending ones up to
// now, with the mean wait of every workload in scope.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const at = (iso: string) => Date.parse(iso);
const id = (n: number) => `qr000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('API ranking sort_by=queue_seconds', () => {
  let t: TestService;
  const workloads = [
    // llm: waited 10 min, 1 h (completed), 20 min 0.5 s (failed), and 30 min so far (pending, 11:30).
    aWorkload({ workloadId: id(1), initiativeId: 'llm', name: 'ten', submittedAt: at('2026-11-20T08:00:00Z'), startedAt: at('2026-11-20T08:10:00Z'), completedAt: at('2026-11-20T09:00:00Z') }),
    aWorkload({ workloadId: id(2), initiativeId: 'llm', name: 'hour', submittedAt: at('2026-11-19T08:00:00Z'), startedAt: at('2026-11-19T09:00:00Z'), completedAt: at('2026-11-19T10:00:00Z') }),
    aWorkload({ workloadId: id(3), initiativeId: 'llm', name: 'failed', status: 'failed', submittedAt: at('2026-11-20T07:00:00Z'), startedAt: at('2026-11-20T07:20:00.500Z'), completedAt: at('2026-11-20T07:30:00Z'), exitCode: 1 }),
    aWorkload({ workloadId: id(4), initiativeId: 'llm', name: 'pending', status: 'pending', submittedAt: at('2026-11-20T11:30:00Z'), startedAt: null, completedAt: null, exitCode: null }),
    // vision: running after 5 min, cancelled unstarted after 45 min, and a pending one created 5 min
    // after the service's now by a skewed clock (0 until then).
    aWorkload({ workloadId: id(5), initiativeId: 'vision', name: 'running', status: 'running', submittedAt: at('2026-11-20T10:00:00Z'), startedAt: at('2026-11-20T10:05:00Z'), completedAt: null, exitCode: null }),
    aWorkload({ workloadId: id(6), initiativeId: 'vision', name: 'cancelled', status: 'cancelled', submittedAt: at('2026-11-20T06:00:00Z'), startedAt: null, completedAt: at('2026-11-20T06:45:00Z'), exitCode: null }),
    aWorkload({ workloadId: id(7), initiativeId: 'vision', name: 'future', status: 'pending', submittedAt: at('2026-11-20T12:05:00Z'), startedAt: null, completedAt: null, exitCode: null }),
  ];

  before(async () => {
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
  });
  after(() => t.stop());

  const rank = async (query: string, as = t.callers.admin) => {
    const res = await t.get(`/v1/workloads/metrics?sort_by=queue_seconds${query}`, { as });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const waits = (body: { data: { workloads: { name: string; queue_seconds: { total: number } }[] } }) =>
    body.data.workloads.map((w) => [w.name, w.queue_seconds.total]);

  it('ranks every workload in scope by its wait, longest first, pending ones up to now', async () => {
    const body = await rank('');
    expect(waits(body)).to.deep.equal([
      ['hour', 3600], ['cancelled', 2700], ['pending', 1800], ['failed', 1200], ['ten', 600], ['running', 300], ['future', 0],
    ]);
    expect(body.metadata.total_count).to.equal(7);
    // (3,600 + 2,700 + 1,800 + 1,200.5 + 600 + 300 + 0) / 7, of exact ms.
    expect(body.data.scope_average).to.deep.equal({ queue_seconds: 1457.21 });
  });

  it('gives each entry the queue_seconds of GET /v1/workloads/{id}, and only the sort_by figure', async () => {
    const body = await rank('&limit=3');
    for (const entry of body.data.workloads) {
      const own = await t.get(`/v1/workloads/${entry.workload_id}`);
      expect(entry.queue_seconds.total).to.equal(own.body.data.queue_seconds);
      expect(Object.keys(entry).sort()).to.deep.equal(['initiative_id', 'name', 'queue_seconds', 'workload_id']);
    }
  });

  it('ranks shortest first with order=asc, ties to the smaller workload_id', async () => {
    expect(waits(await rank('&order=asc&limit=3'))).to.deep.equal([['future', 0], ['running', 300], ['ten', 600]]);
  });

  it('lets the pending waits grow with the clock, past the finished ones', async () => {
    t.clock.set('2026-11-20T13:00:00Z');
    try {
      const body = await rank('&limit=3');
      expect(waits(body)).to.deep.equal([['pending', 5400], ['hour', 3600], ['future', 3300]]);
      // (3,600 + 2,700 + 5,400 + 1,200.5 + 600 + 300 + 3,300) / 7
      expect(body.data.scope_average.queue_seconds).to.equal(2442.93);
    } finally {
      t.clock.set('2026-11-20T12:00:00Z');
    }
  });

  it('filters by status and initiative, the average and count following', async () => {
    const pending = await rank('&status=pending');
    expect(waits(pending)).to.deep.equal([['pending', 1800], ['future', 0]]);
    expect(pending.metadata.total_count).to.equal(2);
    expect(pending.data.scope_average.queue_seconds).to.equal(900);
    const vision = await rank('&initiative_id=vision');
    expect(waits(vision)).to.deep.equal([['cancelled', 2700], ['running', 300], ['future', 0]]);
    expect(vision.data.scope_average.queue_seconds).to.equal(1000);
  });

  it('shows a MEMBER only its team, and a caller without teams nothing', async () => {
    expect(waits(await rank('', t.callers.member))).to.deep.equal([['cancelled', 2700], ['running', 300], ['future', 0]]);
    const none = await rank('', t.callers.noTeams);
    expect(none.data).to.deep.equal({ workloads: [], scope_average: { queue_seconds: null } });
    expect(none.metadata.total_count).to.equal(0);
  });
});
