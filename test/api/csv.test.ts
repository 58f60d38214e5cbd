// Accept: text/csv on /v1/workloads, /v1/workloads/stats and /v1/capacity through the real service:
// RFC 4180 text (parsed here by csv-parse, strict about quotes), a header row, the JSON's scope,
// filters and numbers, a download name, and JSON for errors and for callers who prefer it.
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import sinon from 'sinon';
import { noBudgets } from '../../src/query/empty-sources.js';
import { exportWorkloads } from '../../src/query/export-workloads.js';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { startTestService, type JsonBody, type RequestOptions, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const CSV = { Accept: 'text/csv' };
const START = Date.parse('2026-11-18T00:00:00Z');
const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 1000,
  pools: [{ poolId: 'h100', name: 'H100, "big"', allocatedGpuHours: 600, instanceTypes: ['p5.48xlarge', 'p5e.48xlarge'] }],
  initiatives: [{ initiativeId: 'llm', name: 'LLM', allocatedGpuHours: 700, namespaces: [] }],
};

const id = (n: number) => `c5000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('API CSV (Accept: text/csv)', () => {
  let t: TestService;
  // More than one page of the export (1,000 rows), a minute apart, over two teams and three statuses.
  const workloads = Array.from({ length: 1_205 }, (_, n) => {
    const submittedAt = START + n * 60_000;
    const status = (['completed', 'failed', 'running'] as const)[n % 3];
    return aWorkload({
      workloadId: id(n), name: `job-${n}`, initiativeId: n % 4 === 0 ? 'vision' : 'llm', submittedBy: n % 2 === 0 ? 'alice' : 'bob', status,
      instanceType: 'p5.48xlarge', gpuCount: 1 + (n % 8), submittedAt, startedAt: submittedAt + 5_000,
      completedAt: status === 'running' ? null : submittedAt + 65_000, exitCode: status === 'failed' ? 3 : status === 'completed' ? 0 : null,
      ...(status === 'failed' ? { failureReason: 'nonzero_exit' as const } : {}),
    });
  });
  // Text a spreadsheet must not misread: a comma and quotes, a line break, a formula.
  const awkward = [
    aWorkload({ workloadId: id(9001), submittedBy: 'o"brien, jr', initiativeId: 'llm', submittedAt: START - 3_000 }),
    aWorkload({ workloadId: id(9002), submittedBy: 'two\r\nlines', initiativeId: 'llm', submittedAt: START - 2_000 }),
    aWorkload({ workloadId: id(9003), submittedBy: '=HYPERLINK("http://x","y")', initiativeId: 'llm', submittedAt: START - 1_000 }),
  ];

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads([...workloads, ...awkward]);
    await t.service.store.upsertPodIntervals(workloads.slice(0, 50).map((w) => aPodInterval(w)));
  });
  after(async () => {
    sinon.restore();
    await t.stop();
  });

  const csv = async (path: string, options: RequestOptions = {}) => {
    const res = await t.getText(path, { ...options, headers: { ...CSV, ...options.headers } });
    expect(res.status, res.text.slice(0, 300)).to.equal(200);
    const records = parse(res.text, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
    const header = res.text.slice(0, res.text.indexOf('\r\n')).split(',');
    return { res, records, header };
  };
  /** Every workload id of the JSON list, page after page. */
  const jsonWalk = async (query: string, options: RequestOptions = {}) => {
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const res = await t.get(`/v1/workloads?limit=100${query}${token ? `&next_token=${token}` : ''}`, options);
      expect(res.status).to.equal(200);
      ids.push(...res.body.data.workloads.map((w: JsonBody) => w.workload_id));
      token = res.body.metadata.next_token;
    } while (token !== undefined);
    return ids;
  };

  it('answers every matching workload in list order, with a header row, the same rows as the JSON pages', async () => {
    const { res, records, header } = await csv('/v1/workloads');
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="workloads-acme-20261120T120000Z.csv"');
    expect(res.headers.get('vary')).to.match(/\bAccept\b/);
    expect(res.headers.get('x-total-count')).to.equal('1208');
    expect(res.text.endsWith('\r\n')).to.equal(true);
    expect(header).to.deep.equal([
      'workload_id', 'name', 'status', 'submitted_by', 'initiative_id', 'instance_type', 'gpu_count', 'submitted_at', 'started_at',
      'completed_at', 'failure_reason', 'exit_code', 'is_managed', 'cluster_id', 'namespace', 'allocated_gpus', 'gpu_sharing', 'gpu_model',
    ]);
    expect(records.map((r) => r.workload_id)).to.have.lengthOf(1_208).and.deep.equal(await jsonWalk(''));
  });

  it('gives the JSON\'s values, numbers unformatted and null as an empty field', async () => {
    const { records } = await csv('/v1/workloads?status=failed');
    const failed = records.find((r) => r.workload_id === id(1));
    const json = (await t.get(`/v1/workloads/${id(1)}`)).body.data;
    expect(failed).to.deep.equal({
      workload_id: id(1), name: 'job-1', status: 'failed', submitted_by: 'bob', initiative_id: 'llm', instance_type: 'p5.48xlarge', gpu_count: '2',
      submitted_at: json.submitted_at, started_at: json.started_at, completed_at: json.completed_at, failure_reason: 'nonzero_exit', exit_code: '3',
      is_managed: String(json.is_managed), cluster_id: json.cluster_id, namespace: json.namespace,
      allocated_gpus: String(json.allocated_gpus), gpu_sharing: '', gpu_model: '',
    });
    const running = (await csv('/v1/workloads?status=running&limit=1')).records[0];
    expect(running).to.include({ status: 'running', completed_at: '', failure_reason: '', exit_code: '' });
  });

  it('quotes commas, quotes and line breaks, and defuses text a spreadsheet would run as a formula', async () => {
    const { res, records } = await csv(`/v1/workloads?start_date=${new Date(START - 10_000).toISOString()}&end_date=${new Date(START).toISOString()}`);
    expect(records.map((r) => r.submitted_by)).to.deep.equal(['\'=HYPERLINK("http://x","y")', 'two\r\nlines', 'o"brien, jr']);
    expect(res.text).to.include('"o""brien, jr"').and.include('"two\r\nlines"').and.include('"\'=HYPERLINK(""http://x"",""y"")"');
  });

  it('scopes and filters exactly as the JSON does', async () => {
    const member = await csv('/v1/workloads', { as: t.callers.member });
    expect(new Set(member.records.map((r) => r.initiative_id))).to.deep.equal(new Set(['vision']));
    expect(member.records.map((r) => r.workload_id)).to.deep.equal(await jsonWalk('', { as: t.callers.member }));
    const filtered = await csv('/v1/workloads?status=completed&submitted_by=alice&initiative_id=llm');
    expect(filtered.records).to.have.lengthOf(100);
    expect(filtered.records.map((r) => r.workload_id)).to.deep.equal(await jsonWalk('&status=completed&submitted_by=alice&initiative_id=llm'));
    const outside = await t.getText('/v1/workloads?initiative_id=llm', { as: t.callers.member, headers: CSV });
    expect(outside.status).to.equal(403);
    expect(JSON.parse(outside.text).error.code).to.equal('FORBIDDEN');
  });

  it('sends one page for an explicit limit, with X-Next-Token to continue from', async () => {
    const first = await csv('/v1/workloads?status=running&limit=7');
    const json = (await t.get('/v1/workloads?status=running&limit=7')).body;
    expect(first.records.map((r) => r.workload_id)).to.deep.equal(json.data.workloads.map((w: JsonBody) => w.workload_id));
    expect(first.res.headers.get('x-next-token')).to.equal(json.metadata.next_token);
    const second = await csv(`/v1/workloads?status=running&limit=7&next_token=${first.res.headers.get('x-next-token')}`);
    const next = (await t.get(`/v1/workloads?status=running&limit=7&next_token=${json.metadata.next_token}`)).body;
    expect(second.records.map((r) => r.workload_id)).to.deep.equal(next.data.workloads.map((w: JsonBody) => w.workload_id));
  });

  it('refuses an export over its row cap before sending anything, saying how many match', async () => {
    const scope = { organizationId: 'acme', initiatives: null };
    const error = await exportWorkloads(t.service.index, scope, { limit: undefined }, { maxRows: 1_000 }).then(() => undefined, (e: unknown) => e);
    expect(error).to.have.nested.property('details[0].message', 'text/csv holds at most 1,000 workloads and 1,208 match: ' +
      'narrow start_date and end_date or the other filters, or page with limit and X-Next-Token');
    const within = await exportWorkloads(t.service.index, scope, { limit: undefined, status: 'running' }, { maxRows: 1_000 });
    let rows = 0;
    for await (const page of within.pages) rows += page.length;
    expect(rows).to.equal(within.totalCount).and.equal(401);
  });

  it('cuts the response short when a read fails after the header, so no partial file looks whole', async () => {
    const list = sinon.stub(t.service.index, 'list').callThrough();
    list.onSecondCall().rejects(new Error('disk gone'));
    try {
      const failure = await t.getText('/v1/workloads', { headers: CSV }).then(() => undefined, (e: unknown) => e);
      expect(failure).to.be.instanceOf(Error);
    } finally {
      list.restore();
    }
    expect((await csv('/v1/workloads?limit=1')).records).to.have.lengthOf(1);
  });

  it('keeps errors as the JSON envelope', async () => {
    const res = await t.getText('/v1/workloads?status=lost', { headers: CSV });
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(JSON.parse(res.text).error.details[0]).to.include({ field: 'status' });
  });

  it('answers JSON unless the caller prefers CSV, and where an endpoint has no CSV', async () => {
    for (const accept of ['*/*', 'application/json, text/csv;q=0.5', 'text/html']) {
      const res = await t.getText('/v1/workloads?limit=1', { headers: { Accept: accept } });
      expect(res.headers.get('content-type'), accept).to.match(/^application\/json/);
    }
    const preferred = await t.getText('/v1/workloads?limit=1', { headers: { Accept: 'application/json;q=0.1, text/csv;q=0.9' } });
    expect(preferred.headers.get('content-type')).to.match(/^text\/csv/);
    const one = await t.getText(`/v1/workloads/${id(1)}`, { headers: CSV });
    expect(one.headers.get('content-type')).to.match(/^application\/json/);
  });

  it('answers statistics as the summary, each group and each interval, with the JSON\'s figures', async () => {
    const query = 'time_range=last_7_days&group_by=initiative_id&interval=day&queue_percentiles=95';
    const { res, records, header } = await csv(`/v1/workloads/stats?${query}`);
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="workload-stats-acme-20261120T120000Z.csv"');
    expect(header).to.deep.equal([
      'row', 'start', 'initiative_id', 'workload_count', 'gpu_hours', 'average_duration_seconds', 'success_rate', 'average_queue_seconds',
      'p95_queue_seconds', 'idle_gpu_hours', 'gpu_efficiency', 'utilization_coverage', 'energy_kwh', 'energy_coverage',
    ]);
    const json = (await t.get(`/v1/workloads/stats?${query}`)).body.data;
    const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));
    const [summary, ...rest] = records;
    expect(summary).to.deep.include({
      row: 'summary', start: '', initiative_id: '', workload_count: text(json.summary.total_workloads), gpu_hours: text(json.summary.total_gpu_hours),
      average_duration_seconds: text(json.summary.average_duration_seconds), p95_queue_seconds: text(json.summary.p95_queue_seconds),
      idle_gpu_hours: text(json.summary.total_idle_gpu_hours), energy_coverage: text(json.summary.energy_coverage),
    });
    expect(rest.filter((r) => r.row === 'group').map((r) => [r.initiative_id, r.workload_count, r.gpu_hours, r.success_rate, r.p95_queue_seconds]))
      .to.deep.equal(json.grouped.map((g: JsonBody) => [g.initiative_id, text(g.workload_count), text(g.gpu_hours), text(g.success_rate), text(g.p95_queue_seconds)]));
    expect(rest.filter((r) => r.row === 'interval').map((r) => [r.start, r.initiative_id, r.workload_count, r.gpu_hours, r.average_duration_seconds]))
      .to.deep.equal(json.series.map((e: JsonBody) => [e.start, e.initiative_id, text(e.workload_count), text(e.gpu_hours), '']));
    expect(Number(summary?.gpu_hours)).to.be.greaterThan(0);
  });

  it('answers capacity as one record per budget: the organization, each pool, each initiative', async () => {
    const { res, records } = await csv('/v1/capacity');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="capacity-acme-20261120T120000Z.csv"');
    const json = (await t.get('/v1/capacity')).body.data;
    const text = (v: unknown) => (v === null ? '' : String(v));
    expect(records).to.deep.equal([
      {
        level: 'organization', id: 'acme', name: '', allocated_gpu_hours: '1000', used_gpu_hours: text(json.summary.total_used_gpu_hours),
        remaining_gpu_hours: text(json.summary.total_remaining_gpu_hours), burn_rate_gpu_hours_per_day: text(json.summary.burn_rate_gpu_hours_per_day),
        projected_used_gpu_hours_at_period_end: text(json.summary.projected_used_gpu_hours_at_period_end),
        projected_exhaustion_at: text(json.summary.projected_exhaustion_at), current_active_gpus: text(json.summary.current_active_gpus), instance_types: '',
        capacity_gpu_hours_in_period: '', over_committed: '',
      },
      ...json.pools.map((p: JsonBody) => ({
        level: 'pool', id: p.pool_id, name: 'H100, "big"', allocated_gpu_hours: '600', used_gpu_hours: text(p.used_gpu_hours), remaining_gpu_hours: text(p.remaining_gpu_hours),
        burn_rate_gpu_hours_per_day: text(p.burn_rate_gpu_hours_per_day), projected_used_gpu_hours_at_period_end: text(p.projected_used_gpu_hours_at_period_end),
        projected_exhaustion_at: text(p.projected_exhaustion_at), current_active_gpus: '', instance_types: 'p5.48xlarge p5e.48xlarge',
        // No cluster is watched: no GPU node, so no hardware to set the budget against.
        capacity_gpu_hours_in_period: '', over_committed: 'false',
      })),
      ...json.initiatives.map((i: JsonBody) => ({
        level: 'initiative', id: 'llm', name: 'LLM', allocated_gpu_hours: '700', used_gpu_hours: text(i.used_gpu_hours), remaining_gpu_hours: text(i.remaining_gpu_hours),
        burn_rate_gpu_hours_per_day: text(i.burn_rate_gpu_hours_per_day), projected_used_gpu_hours_at_period_end: text(i.projected_used_gpu_hours_at_period_end),
        projected_exhaustion_at: text(i.projected_exhaustion_at), current_active_gpus: '', instance_types: '',
        capacity_gpu_hours_in_period: '', over_committed: '',
      })),
    ]);
    expect(Number(records[0]?.used_gpu_hours)).to.be.greaterThan(0);
  });
});
