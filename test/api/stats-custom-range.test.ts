// The longest custom statistics range is the retention (retention_days): a span past it is a
// VALIDATION_ERROR that gives the span and the maximum; one of exactly the maximum answers, with
// end_date or without it (the range then ends now). Only custom ranges are bounded.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const RETENTION_DAYS = 20;
const NOW = '2026-11-20T12:00:00Z';
const LIMIT = 'a custom range spans at most 20 days (retention_days: older finished workloads are no longer in the index)';

describe('API statistics custom range span', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ now: NOW, env: { GPUCAP_RETENTION_DAYS: String(RETENTION_DAYS) } });
    await t.service.store.upsertWorkloads([
      aWorkload({ submittedAt: Date.parse('2026-10-31T12:00:00Z'), startedAt: Date.parse('2026-10-31T12:00:30Z'), completedAt: Date.parse('2026-10-31T13:00:00Z') }),
      aWorkload({ submittedAt: Date.parse('2026-11-10T00:00:00Z'), startedAt: Date.parse('2026-11-10T00:01:00Z'), completedAt: Date.parse('2026-11-10T01:00:00Z') }),
    ]);
  });
  after(() => t.stop());

  const stats = (query: string) => t.get(`/v1/workloads/stats?time_range=custom&${query}`);
  const expectRefused = (res: { status: number; body: { error: { code: string; details: unknown[] } } }, message: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details).to.deep.equal([{ location: 'query', field: 'start_date', message }]);
  };

  it('refuses a span past the retention, saying the span and the maximum', async () => {
    expectRefused(await stats('start_date=2026-10-01&end_date=2026-10-22'), `is 21 days before end_date; ${LIMIT}`);
    expectRefused(await stats('start_date=2026-10-01T00:00:00Z&end_date=2026-10-21T06:30:00Z'), `is 20 days 6 h 30 min before end_date; ${LIMIT}`);
  });

  it('answers a span of exactly the maximum', async () => {
    const res = await stats('start_date=2026-10-31T00:00:00Z&end_date=2026-11-20T00:00:00Z&queue_percentiles=50&group_by=initiative_id');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.summary.total_workloads).to.equal(2);
    expect(res.body.data.summary.p50_queue_seconds).to.equal(30);
  });

  it('measures to now when end_date is omitted', async () => {
    const atMaximum = await stats('start_date=2026-10-31T12:00:00Z');
    expect(atMaximum.status, JSON.stringify(atMaximum.body)).to.equal(200);
    expect(atMaximum.body.data.summary.total_workloads).to.equal(2);
    expectRefused(await stats('start_date=2026-10-31T11:59:59Z'), `is 20 days 1 s before now (end_date omitted); ${LIMIT}`);
  });

  it('leaves the named ranges alone, even one longer than the retention', async () => {
    const res = await t.get('/v1/workloads/stats?time_range=last_30_days');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.summary.total_workloads).to.equal(2);
  });
});
