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
