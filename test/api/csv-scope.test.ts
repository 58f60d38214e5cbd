// Statistics and capacity as CSV for a MEMBER (vision) and a TEAM_LEAD (llm, vision): the same scope
// as their JSON, record for record and figure for figure, with no row of a team they are not in.
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import sinon from 'sinon';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { noBudgets } from '../../src/query/empty-sources.js';
import { startTestService, type Caller, type JsonBody, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 2000,
  pools: [{ poolId: 'h100', name: 'H100', allocatedGpuHours: 1500, instanceTypes: ['p5.48xlarge'] }],
  initiatives: [
    { initiativeId: 'llm', name: 'LLM', allocatedGpuHours: 900, namespaces: [] },
    { initiativeId: 'vision', name: 'Vision', allocatedGpuHours: 300, namespaces: [] },
    { initiativeId: 'speech', name: 'Speech', allocatedGpuHours: 200, namespaces: [] },
  ],
};
const TEAMS = ['llm', 'vision', 'speech'];
const HOUR = 3_600_000;
const id = (n: number) => `c5c00000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

describe('API CSV of statistics and capacity, by role', () => {
  let t: TestService;
  // Three teams over the last four days, each with its own number of workloads and GPUs, so that a
  // team too many or too few changes every figure.
  const workloads = Array.from({ length: 36 }, (_, n) => {
    const team = TEAMS[n % 3] as string;
    const submittedAt = Date.parse('2026-11-16T06:00:00Z') + n * 2 * HOUR;
    return aWorkload({
      workloadId: id(n), initiativeId: team, submittedBy: n % 2 === 0 ? 'alice' : 'bob', gpuCount: 1 + (n % 3) * 2 + (n % 4),
      status: n % 5 === 0 ? 'failed' : 'completed', submittedAt, startedAt: submittedAt + 60_000, completedAt: submittedAt + HOUR + (n % 3) * 600_000,
      exitCode: n % 5 === 0 ? 1 : 0, ...(n % 5 === 0 ? { failureReason: 'nonzero_exit' as const } : {}),
    });
  });

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
  });
  after(async () => {
    sinon.restore();
    await t.stop();
  });

  const csv = async (path: string, as: Caller) => {
    const res = await t.getText(path, { as, headers: { Accept: 'text/csv' } });
    expect(res.status, res.text.slice(0, 300)).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/csv/);
    const header = res.text.slice(0, res.text.indexOf('\r\n')).split(',');
    return { header, records: parse(res.text, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[] };
  };
  const json = async (path: string, as: Caller) => {
    const res = await t.get(path, { as });
    expect(res.status).to.equal(200);
    return res.body.data;
  };
  /** The JSON objects as CSV records of `header`: each column the object's field of that name, as text. */
  const asRecords = (header: string[], objects: Record<string, unknown>[]) =>
    objects.map((object) => Object.fromEntries(header.map((column) => [column, text(object[column])])));

  const roles: [string, () => Caller, string[]][] = [
    ['MEMBER', () => t.callers.member, ['vision']],
    ['TEAM_LEAD', () => t.callers.lead, ['llm', 'vision']],
  ];
  for (const [role, caller, teams] of roles) {
    describe(`as ${role} of ${teams.join(', ')}`, () => {
      it('statistics: the summary, each group and each interval of their JSON, and no other team', async () => {
        const query = '/v1/workloads/stats?time_range=last_7_days&group_by=initiative_id&interval=day&queue_percentiles=50,95';
        const { header, records } = await csv(query, caller());
        const data = await json(query, caller());
        const { summary } = data;
        expect(records).to.deep.equal(asRecords(header, [
          {
            ...summary, row: 'summary', workload_count: summary.total_workloads, gpu_hours: summary.total_gpu_hours,
            idle_gpu_hours: summary.total_idle_gpu_hours, energy_kwh: summary.total_energy_kwh,
          },
          ...data.grouped.map((group: JsonBody) => ({ ...group, row: 'group' })),
          ...data.series.map((entry: JsonBody) => ({ ...entry, row: 'interval' })),
        ]));
        // Their teams exactly: each of them, in groups and intervals, and nothing of the others.
        const mine = workloads.filter((w) => teams.includes(w.initiativeId));
        expect(records[0]).to.include({ row: 'summary', initiative_id: '', workload_count: String(mine.length) });
        expect(new Set(records.filter((r) => r.row !== 'summary').map((r) => r.initiative_id))).to.deep.equal(new Set(teams));
        const gpuHours = mine.reduce((sum, w) => sum + (w.gpuCount * ((w.completedAt ?? 0) - (w.startedAt ?? 0))) / HOUR, 0);
        expect(Number(records[0]?.gpu_hours)).to.be.closeTo(gpuHours, 0.001);
        const admin = await csv(query, t.callers.admin);
        expect(Number(admin.records[0]?.workload_count)).to.equal(workloads.length);
      });

      it('statistics without groups: the summary alone, their own', async () => {
        const { header, records } = await csv('/v1/workloads/stats?time_range=last_7_days', caller());
        const { summary } = await json('/v1/workloads/stats?time_range=last_7_days', caller());
        expect(header).to.not.include('initiative_id');
        expect(records).to.have.lengthOf(1);
        expect(records[0]).to.deep.include({ row: 'summary', workload_count: text(summary.total_workloads), gpu_hours: text(summary.total_gpu_hours) });
      });

      it('capacity: the organization, each pool and their teams\' budgets, with the figures of their JSON', async () => {
        const { header, records } = await csv('/v1/capacity', caller());
        const data = await json('/v1/capacity', caller());
        const { summary } = data;
        expect(records).to.deep.equal(asRecords(header, [
          {
            ...summary, level: 'organization', id: data.organization_id, allocated_gpu_hours: summary.total_allocated_gpu_hours,
            used_gpu_hours: summary.total_used_gpu_hours, remaining_gpu_hours: summary.total_remaining_gpu_hours,
          },
          ...data.pools.map((pool: JsonBody) => ({ ...pool, level: 'pool', id: pool.pool_id, instance_types: pool.instance_types.join(' ') })),
          ...data.initiatives.map((initiative: JsonBody) => ({ ...initiative, level: 'initiative', id: initiative.initiative_id })),
        ]));
        expect(records.filter((r) => r.level === 'initiative').map((r) => r.id).sort()).to.deep.equal([...teams].sort());
        expect(records.filter((r) => r.level === 'pool').map((r) => r.id)).to.deep.equal(['h100']);
        expect(records.map((r) => r.name)).to.not.include('Speech');
        for (const team of teams) {
          const used = workloads.filter((w) => w.initiativeId === team).reduce((sum, w) => sum + (w.gpuCount * ((w.completedAt ?? 0) - (w.startedAt ?? 0))) / HOUR, 0);
          expect(Number(records.find((r) => r.id === team)?.used_gpu_hours), team).to.be.closeTo(used, 0.001);
        }
      });

      it('refuses another team\'s initiative_id as their JSON does, in the JSON envelope', async () => {
        for (const path of ['/v1/workloads/stats?initiative_id=speech', '/v1/capacity?initiative_id=speech']) {
          const res = await t.getText(path, { as: caller(), headers: { Accept: 'text/csv' } });
          expect(res.status, path).to.equal(403);
          expect(res.headers.get('content-type')).to.match(/^application\/json/);
          expect(JSON.parse(res.text).error.code).to.equal('FORBIDDEN');
        }
      });
    });
  }
});
