// group_by=failure_reason through the real service: one group per reason, the workloads that did not
// fail in one group with failure_reason null, the groups adding up to the summary, on the rollup path
// (whole days) and the rows path (partial days), scoped like every statistic.
import { expect } from 'chai';
import type { JsonBody } from '../support/service-harness.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';
import { NO_USAGE } from '../support/no-usage.js';

const at = (iso: string) => Date.parse(iso);

describe('API statistics by failure reason', () => {
  let t: TestService;
  const day = (d: number, hour = 10) => at(`2026-11-${String(d).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00Z`);
  const run = (id: number, overrides: Parameters<typeof aWorkload>[0]) => {
    const submittedAt = overrides?.submittedAt ?? day(15);
    return aWorkload({ workloadId: `fr000000-0000-4000-8000-00000000000${id}`, gpuCount: 1, submittedAt, startedAt: submittedAt, completedAt: submittedAt + 3_600_000, ...overrides });
  };
  const workloads = [
    run(1, { status: 'failed', exitCode: 137, failureReason: 'oom_killed', submittedAt: day(14) }),
    run(2, { status: 'failed', exitCode: 137, failureReason: 'oom_killed', submittedAt: day(18), initiativeId: 'vision' }),
    run(3, { status: 'failed', exitCode: 1, failureReason: 'backoff_limit_exceeded', submittedAt: day(16) }),
    run(4, { status: 'cancelled', exitCode: 143, failureReason: 'preempted', submittedAt: day(20, 9), initiativeId: 'vision' }),
    run(5, { status: 'completed', exitCode: 0, submittedAt: day(17) }),
    run(6, { status: 'running', exitCode: null, completedAt: null, submittedAt: day(20, 8) }),
  ];

  before(async () => {
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
  });
  after(() => t.stop());

  const grouped = async (query: string, as = t.callers.admin) => {
    const res = await t.get(`/v1/workloads/stats?group_by=failure_reason&${query}`, { as });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { summary: JsonBody; grouped: JsonBody[] };
  };

  it('gives one group per reason and one, null, for the workloads that did not fail', async () => {
    const { summary, grouped: groups } = await grouped('time_range=last_7_days');
    expect(groups).to.deep.equal([
      // Running since 08:00 on the 20th: 4 GPU-hours by noon, the largest group.
      { failure_reason: null, workload_count: 2, gpu_hours: 5, success_rate: 1, average_queue_seconds: 0, ...NO_USAGE },
      { failure_reason: 'oom_killed', workload_count: 2, gpu_hours: 2, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE },
      { failure_reason: 'backoff_limit_exceeded', workload_count: 1, gpu_hours: 1, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE },
      { failure_reason: 'preempted', workload_count: 1, gpu_hours: 1, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE },
    ]);
    expect(groups.reduce((n, g) => n + g.workload_count, 0)).to.equal(summary.total_workloads);
  });

  it('counts a range with partial first and last days from the rows, and whole days from the rollup, the same way', async () => {
    // 14th 12:00 to 20th 08:30: the 14th's failure (10:00) and the preemption (09:00 on the 20th) stay out.
    const { grouped: groups } = await grouped('time_range=custom&start_date=2026-11-14T12:00:00Z&end_date=2026-11-20T08:30:00Z');
    expect(groups.map((g) => [g.failure_reason, g.workload_count])).to.deep.equal([
      [null, 2],
      ['backoff_limit_exceeded', 1],
      ['oom_killed', 1],
    ]);
  });

  it('shows a MEMBER of vision only vision\'s reasons', async () => {
    const { grouped: groups } = await grouped('time_range=last_7_days', t.callers.member);
    expect(groups.map((g) => [g.failure_reason, g.workload_count])).to.deep.equal([
      ['oom_killed', 1],
      ['preempted', 1],
    ]);
  });

  it('gives each workload its reason on GET, and null when it did not fail', async () => {
    const failed = await t.get(`/v1/workloads/${workloads[0]?.workloadId}`);
    expect(failed.body.data).to.include({ status: 'failed', failure_reason: 'oom_killed' });
    const running = await t.get(`/v1/workloads/${workloads[5]?.workloadId}`);
    expect(running.body.data).to.include({ status: 'running', failure_reason: null });
  });

  it('refuses a group_by it does not know, naming the ones it does', async () => {
    const res = await t.get('/v1/workloads/stats?group_by=reason');
    expect(res.status).to.equal(400);
    expect(JSON.stringify(res.body.error)).to.include('failure_reason');
  });
});
