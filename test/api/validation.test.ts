// Bad input gets VALIDATION_ERROR with details naming the parameter; unknown parameters catch typos.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const W = '/v1/workloads/a0000000-0000-4000-8000-000000000001';

// [path with query, field the details must name, words the message must contain]
const cases: [string, string, string][] = [
  ['/v1/workloads?limit=0', 'limit', 'between 1 and 100'],
  ['/v1/workloads?limit=101', 'limit', 'between 1 and 100'],
  ['/v1/workloads?limit=ten', 'limit', 'integer'],
  ['/v1/workloads?limit=2.5', 'limit', 'integer'],
  ['/v1/workloads?limit=5&limit=6', 'limit', 'given once'],
  ['/v1/workloads?limit=0x10', 'limit', 'integer, got "0x10"'],
  ['/v1/workloads?limit=1e1', 'limit', 'integer'],
  ['/v1/workloads?limit=%2B5', 'limit', 'integer'],
  ['/v1/workloads?limit=%205', 'limit', 'integer'],
  ['/v1/workloads?limit=-1', 'limit', 'between 1 and 100'],
  ['/v1/workloads?status=done', 'status', 'pending, running, completed, failed, cancelled'],
  ['/v1/workloads?status=RUNNING', 'status', 'one of'],
  ['/v1/workloads?is_managed=yes', 'is_managed', 'true or false'],
  ['/v1/workloads?start_date=yesterday', 'start_date', 'ISO 8601'],
  ['/v1/workloads?start_date=2026-02-30', 'start_date', 'ISO 8601'],
  ['/v1/workloads?end_date=2026-11-01T10:00:00', 'end_date', 'ISO 8601'],
  ['/v1/workloads?start_date=', 'start_date', 'ISO 8601'],
  ['/v1/workloads?start_date=2026-11-01T10:00Z', 'start_date', 'ISO 8601'], // RFC 3339 needs the seconds
  ['/v1/workloads?start_date=2026-11-01%2010:00:00Z', 'start_date', 'ISO 8601'],
  ['/v1/workloads?next_token=', 'next_token', 'next_token of a previous page'],
  ['/v1/workloads?next_token=a%2Bb', 'next_token', 'next_token of a previous page'],
  ['/v1/workloads?start_date=2026-11-02&end_date=2026-11-01', 'end_date', 'after start_date'],
  ['/v1/workloads?initiative_id=', 'initiative_id', 'empty'],
  ['/v1/workloads?next_token=not-a-token', 'next_token', 'not a token'],
  ['/v1/workloads?next_token=eyJ4IjoxfQ', 'next_token', 'not a token'],
  ['/v1/workloads?colour=red', 'colour', 'not a parameter'],
  ['/v1/workloads?Status=running', 'Status', 'not a parameter'],
  ['/v1/workloads/stats?time_range=yesterday', 'time_range', 'today, this_week, this_month, last_7_days, last_30_days, custom'],
  ['/v1/workloads/stats?group_by=namespace', 'group_by', 'submitted_by, initiative_id, instance_type'],
  ['/v1/workloads/stats?time_range=custom', 'start_date', 'required'],
  ['/v1/workloads/stats?time_range=today&start_date=2026-11-01', 'start_date', 'only applies to time_range=custom'],
  ['/v1/workloads/stats?limit=5', 'limit', 'not a parameter'],
  ['/v1/workloads/metrics?sort_by=temperature', 'sort_by', 'gpu_utilization, memory_utilization, power_usage, gpu_hours'],
  ['/v1/workloads/metrics?order=up', 'order', 'asc, desc'],
  ['/v1/workloads/metrics?limit=0', 'limit', 'between 1 and 100'],
  ['/v1/workloads/metrics?limit=1000', 'limit', 'between 1 and 100'],
  ['/v1/workloads/metrics?status=lost', 'status', 'one of'],
  [`${W}/metrics?time_range=last_2h`, 'time_range', 'last_1h, last_6h, last_24h, job_lifetime'],
  [`${W}/metrics?metrics=gpu_utilization,fan_speed`, 'metrics', 'comma-separated list of gpu_utilization'],
  [`${W}/metrics?metrics=`, 'metrics', 'comma-separated list'],
  [`${W}/metrics?metrics=gpu_utilization,`, 'metrics', 'comma-separated list'],
  [`${W}/metrics?metrics=gpu_utilization,%20temperature`, 'metrics', 'comma-separated list'],
  [`${W}?verbose=1`, 'verbose', 'not a parameter'],
  ['/v1/capacity?pool=h100', 'pool', 'not a parameter'],
  ['/v1/health?deep=true', 'deep', 'not a parameter'],
];

describe('API validation', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  for (const [path, field, words] of cases) {
    it(`answers 400 VALIDATION_ERROR naming "${field}" for ${path}`, async () => {
      const res = await t.get(path);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      const detail = res.body.error.details.find((d: { field: string }) => d.field === field);
      expect(detail, JSON.stringify(res.body.error.details)).to.include({ location: 'query', field });
      expect(detail.message).to.contain(words);
      expect(res.body.error.message).to.be.a('string').and.not.empty;
      expect(res.body.request_id).to.be.a('string');
    });
  }

  it('reports every bad parameter of one request, not only the first', async () => {
    const res = await t.get('/v1/workloads?limit=0&status=done&colour=red');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).to.have.members(['limit', 'status', 'colour']);
  });

  it('rejects a malformed workload id in the path with location "path"', async () => {
    const res = await t.get('/v1/workloads/bad%20id');
    expect(res.status).to.equal(400);
    expect(res.body.error.details).to.deep.equal([
      { location: 'path', field: 'workload_id', message: 'must be a workload id (a Kubernetes UID: letters, digits, ".", "_", ":", "-", at most 128)' },
    ]);
  });

  it('accepts the documented date forms: a date, Z, and an offset', async () => {
    for (const date of ['2026-11-01', '2026-11-01T00:00:00Z', '2026-11-01T02:00:00%2B02:00', '2026-11-01T00:00:00.123Z']) {
      const res = await t.get(`/v1/workloads?start_date=${date}`);
      expect(res.status, date).to.equal(200);
    }
  });

  it('applies the defaults when parameters are omitted (limit 20)', async () => {
    await t.service.store.upsertWorkloads(Array.from({ length: 25 }, (_, i) => aWorkload({ submittedAt: Date.parse('2026-11-01T00:00:00Z') + i * 1000 })));
    const res = await t.get('/v1/workloads');
    expect(res.body.data.workloads).to.have.length(20);
    expect(res.body.metadata.total_count).to.equal(25);
    expect(res.body.metadata.next_token).to.be.a('string');
  });
});
