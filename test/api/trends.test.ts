// Statistics series (interval=hour|day|week) through the real service: entries per interval of
// submission, Σ series = summary for every interval and grouping, ISO weeks from Monday, and the
// length limits.
import { expect } from 'chai';
import type { JsonBody } from '../support/service-harness.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';
import { NO_USAGE } from '../support/no-usage.js';

const at = (iso: string) => Date.parse(iso);

describe('API statistics series', () => {
  let t: TestService;
  // Now: Friday 2026-11-20 12:00 UTC. Workloads on Sun 15th (ISO week of the 9th), Mon 16th, Thu 19th
  // (two, two teams) and today, one of them still running.
  const workloads = [
    aWorkload({ workloadId: 'tr000000-0000-4000-8000-000000000001', initiativeId: 'llm', gpuCount: 2, submittedAt: at('2026-11-15T22:30:00Z'), startedAt: at('2026-11-15T23:00:00Z'), completedAt: at('2026-11-16T01:00:00Z') }),
    aWorkload({ workloadId: 'tr000000-0000-4000-8000-000000000002', initiativeId: 'vision', gpuCount: 1, submittedAt: at('2026-11-16T00:10:00Z'), startedAt: at('2026-11-16T00:10:00Z'), completedAt: at('2026-11-16T03:10:00Z'), status: 'failed', exitCode: 1 }),
    aWorkload({ workloadId: 'tr000000-0000-4000-8000-000000000003', initiativeId: 'llm', gpuCount: 4, submittedAt: at('2026-11-19T08:00:00Z'), startedAt: at('2026-11-19T08:00:00Z'), completedAt: at('2026-11-19T09:30:00Z') }),
    aWorkload({ workloadId: 'tr000000-0000-4000-8000-000000000004', initiativeId: 'vision', gpuCount: 2, submittedAt: at('2026-11-19T08:59:59Z'), startedAt: at('2026-11-19T09:00:00Z'), completedAt: at('2026-11-19T10:00:00Z') }),
    aWorkload({ workloadId: 'tr000000-0000-4000-8000-000000000005', initiativeId: 'llm', gpuCount: 8, status: 'running', submittedAt: at('2026-11-20T10:00:00Z'), startedAt: at('2026-11-20T10:00:00Z'), completedAt: null, exitCode: null }),
  ];

  before(async () => {
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
  });
  after(() => t.stop());

  const stats = async (query: string) => {
    const res = await t.get(`/v1/workloads/stats?${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };
  const nonEmpty = (series: JsonBody[]) => series.filter((e) => e.workload_count > 0);

  it('gives one entry per day of the range, empty days at 0, each with the figures of the workloads submitted that day', async () => {
    const { series } = await stats('time_range=last_7_days&interval=day');
    // last_7_days from Nov 13 12:00 touches the days Nov 13 … Nov 20: 8 entries.
    expect(series.map((e: JsonBody) => e.start)).to.deep.equal(
      ['13', '14', '15', '16', '17', '18', '19', '20'].map((d) => `2026-11-${d}T00:00:00.000Z`),
    );
    expect(nonEmpty(series)).to.deep.equal([
      { start: '2026-11-15T00:00:00.000Z', workload_count: 1, gpu_hours: 4, success_rate: 1, average_queue_seconds: 1800, ...NO_USAGE },
      { start: '2026-11-16T00:00:00.000Z', workload_count: 1, gpu_hours: 3, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE },
      { start: '2026-11-19T00:00:00.000Z', workload_count: 2, gpu_hours: 8, success_rate: 1, average_queue_seconds: 0.5, ...NO_USAGE },
      { start: '2026-11-20T00:00:00.000Z', workload_count: 1, gpu_hours: 16, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE },
    ]);
    expect(series[0]).to.deep.equal({ start: '2026-11-13T00:00:00.000Z', workload_count: 0, gpu_hours: 0, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE });
  });

  it('starts weeks on Monday 00:00 UTC: Sunday the 15th belongs to the week of the 9th', async () => {
    const { series } = await stats('time_range=last_30_days&interval=week');
    expect(nonEmpty(series)).to.deep.equal([
      { start: '2026-11-09T00:00:00.000Z', workload_count: 1, gpu_hours: 4, success_rate: 1, average_queue_seconds: 1800, ...NO_USAGE },
      { start: '2026-11-16T00:00:00.000Z', workload_count: 4, gpu_hours: 27, success_rate: 0.6667, average_queue_seconds: 0.25, ...NO_USAGE },
    ]);
    expect(new Date(series[0].start).getUTCDay(), 'a Monday').to.equal(1);
  });

  it('splits hours at the hour: 08:59:59 and 08:00 share one, 10:00 starts its own', async () => {
    const { series } = await stats('time_range=today&interval=hour');
    expect(series).to.have.length(13); // 00:00 … 12:00
    expect(nonEmpty(series)).to.deep.equal([{ start: '2026-11-20T10:00:00.000Z', workload_count: 1, gpu_hours: 16, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE }]);
    const week = await stats('time_range=this_week&interval=hour&group_by=initiative_id');
    expect(week.series.filter((e: JsonBody) => e.start === '2026-11-19T08:00:00.000Z')).to.deep.equal([
      { start: '2026-11-19T08:00:00.000Z', initiative_id: 'llm', workload_count: 1, gpu_hours: 6, success_rate: 1, average_queue_seconds: 0, ...NO_USAGE },
      { start: '2026-11-19T08:00:00.000Z', initiative_id: 'vision', workload_count: 1, gpu_hours: 2, success_rate: 1, average_queue_seconds: 1, ...NO_USAGE },
    ]);
  });

  for (const interval of ['hour', 'day', 'week']) {
    for (const groupBy of [null, 'initiative_id', 'submitted_by', 'instance_type']) {
      it(`adds up to the summary by ${interval}${groupBy ? ` and ${groupBy}` : ''}`, async () => {
        const data = await stats(`time_range=last_7_days&interval=${interval}${groupBy ? `&group_by=${groupBy}` : ''}`);
        const sum = (key: string) => Math.round(data.series.reduce((s: number, e: JsonBody) => s + e[key], 0) * 1e4) / 1e4;
        expect([sum('workload_count'), sum('gpu_hours')]).to.deep.equal([data.summary.total_workloads, data.summary.total_gpu_hours]);
        // The summary and the groups come from the series' read: the same as without an interval.
        const { series: _series, ...withoutSeries } = data;
        expect(withoutSeries).to.deep.equal(await stats(`time_range=last_7_days${groupBy ? `&group_by=${groupBy}` : ''}`));
        if (groupBy) {
          // Only non-empty pairs, by start, then by GPU-hours as `grouped` is sorted.
          expect(data.series.every((e: JsonBody) => e.workload_count > 0 && typeof e[groupBy] === 'string')).to.equal(true);
          const starts = data.series.map((e: JsonBody) => e.start);
          expect(starts).to.deep.equal([...starts].sort());
        }
      });
    }
  }

  it('counts a running workload\'s GPU-hours up to now, like the summary', async () => {
    t.clock.set('2026-11-20T13:00:00Z');
    try {
      const { series } = await stats('time_range=today&interval=day');
      expect(series).to.deep.equal([{ start: '2026-11-20T00:00:00.000Z', workload_count: 1, gpu_hours: 24, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE }]);
    } finally {
      t.clock.set('2026-11-20T12:00:00Z');
    }
  });

  it('leaves series out without interval, so existing clients see the same body', async () => {
    const data = await stats('time_range=last_7_days&group_by=initiative_id');
    expect(Object.keys(data)).to.deep.equal(['summary', 'grouped']);
  });

  it('refuses hours over more than 31 days, and an unknown interval, naming the parameter', async () => {
    const long = await t.get(`/v1/workloads/stats?time_range=custom&start_date=2026-10-01&end_date=2026-11-02&interval=hour`);
    expect(long.status).to.equal(400);
    expect(long.body.error.code).to.equal('VALIDATION_ERROR');
    expect(JSON.stringify(long.body.error)).to.include('interval').and.include('744');
    const month = await t.get(`/v1/workloads/stats?time_range=custom&start_date=2026-10-01&end_date=2026-11-01&interval=hour`);
    expect(month.status, '31 days of hours are allowed').to.equal(200);
    expect(month.body.data.series).to.have.length(744);
    const unknown = await t.get('/v1/workloads/stats?interval=month');
    expect(unknown.status).to.equal(400);
    expect(JSON.stringify(unknown.body.error)).to.include('interval');
  });

  it('scopes the series like the summary: a MEMBER of vision sees vision only', async () => {
    const res = await t.get('/v1/workloads/stats?time_range=last_7_days&interval=week&group_by=initiative_id', { as: t.callers.member });
    expect(res.body.data.series.map((e: JsonBody) => e.initiative_id)).to.deep.equal(['vision']);
    expect(res.body.data.series[0]).to.include({ start: '2026-11-16T00:00:00.000Z', workload_count: 2, gpu_hours: 5 });
  });
});
