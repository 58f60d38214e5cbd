// The role matrix of DECISIONS "Authentication and roles", over HTTP: which workloads, figures and
// budgets each caller sees on every endpoint, and the 400/401/403/404 answers around them.
//
// Seed (NOW = 2026-11-20T12:00:00Z), GPU-hours from one pod interval each:
//   acme   llm     L1 completed  8 GPUs 2 h → 16    L2 running    4 GPUs since 10:00 → 8 (p5.48xlarge)
//   acme   vision  V1 completed  2 GPUs 3 h → 6     V2 failed     1 GPU  2 h → 2     (a3-highgpu-8g)
//   acme   audio   A1 completed  1 GPU  4 h → 4     A2 running    3 GPUs since 11:00 → 3 (g5.xlarge)
//   globex llm     G1 completed  8 GPUs 5 h → 40    globex vision G2 running 1 GPU since 06:00 → 6
// Callers (harness): admin (ORG_ADMIN acme), lead (TEAM_LEAD acme: llm, vision),
// member (MEMBER acme: vision), noTeams (MEMBER acme: none), otherOrgAdmin (ORG_ADMIN globex).
import { expect } from 'chai';
import sinon from 'sinon';
import { generateApiToken } from '../../src/auth/token-format.js';
import type { WorkloadRecord } from '../../src/domain/workload.js';
import { noBudgets, noTelemetry } from '../../src/query/empty-sources.js';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { startTestService, type Caller, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';
import { NO_USAGE_TOTALS } from '../support/no-usage.js';

const at = (iso: string) => Date.parse(iso);

function seedWorkload(id: string, overrides: Partial<WorkloadRecord>): WorkloadRecord {
  return aWorkload({ workloadId: `r0000000-0000-4000-8000-0000000000${id}`, name: `job-${id}`, ...overrides });
}

const L1 = seedWorkload('11', {
  initiativeId: 'llm', submittedBy: 'alice', instanceType: 'p5.48xlarge', gpuCount: 8, status: 'completed', exitCode: 0,
  submittedAt: at('2026-11-18T08:00:00Z'), startedAt: at('2026-11-18T08:00:00Z'), completedAt: at('2026-11-18T10:00:00Z'),
});
const L2 = seedWorkload('12', {
  initiativeId: 'llm', submittedBy: 'carol', instanceType: 'p5.48xlarge', gpuCount: 4, status: 'running', exitCode: null,
  submittedAt: at('2026-11-20T09:00:00Z'), startedAt: at('2026-11-20T10:00:00Z'), completedAt: null,
});
const V1 = seedWorkload('21', {
  initiativeId: 'vision', submittedBy: 'bob', instanceType: 'a3-highgpu-8g', gpuCount: 2, status: 'completed', exitCode: 0,
  submittedAt: at('2026-11-19T08:00:00Z'), startedAt: at('2026-11-19T08:00:00Z'), completedAt: at('2026-11-19T11:00:00Z'),
});
const V2 = seedWorkload('22', {
  initiativeId: 'vision', submittedBy: 'bob', instanceType: 'a3-highgpu-8g', gpuCount: 1, status: 'failed', exitCode: 1,
  submittedAt: at('2026-11-19T12:00:00Z'), startedAt: at('2026-11-19T12:00:00Z'), completedAt: at('2026-11-19T14:00:00Z'),
});
const A1 = seedWorkload('31', {
  initiativeId: 'audio', submittedBy: 'dave', instanceType: 'g5.xlarge', gpuCount: 1, status: 'completed', exitCode: 0,
  submittedAt: at('2026-11-17T00:00:00Z'), startedAt: at('2026-11-17T00:00:00Z'), completedAt: at('2026-11-17T04:00:00Z'),
});
const A2 = seedWorkload('32', {
  initiativeId: 'audio', submittedBy: 'dave', instanceType: 'g5.xlarge', gpuCount: 3, status: 'running', exitCode: null,
  submittedAt: at('2026-11-20T10:30:00Z'), startedAt: at('2026-11-20T11:00:00Z'), completedAt: null,
});
const G1 = seedWorkload('41', {
  organizationId: 'globex', initiativeId: 'llm', submittedBy: 'erin', instanceType: 'p5.48xlarge', gpuCount: 8, status: 'completed', exitCode: 0,
  submittedAt: at('2026-11-19T00:00:00Z'), startedAt: at('2026-11-19T00:00:00Z'), completedAt: at('2026-11-19T05:00:00Z'),
});
const G2 = seedWorkload('42', {
  organizationId: 'globex', initiativeId: 'vision', submittedBy: 'frank', instanceType: 'a3-highgpu-8g', gpuCount: 1, status: 'running', exitCode: null,
  submittedAt: at('2026-11-20T05:00:00Z'), startedAt: at('2026-11-20T06:00:00Z'), completedAt: null,
});
const ALL = [L1, L2, V1, V2, A1, A2, G1, G2];
const ids = (...ws: WorkloadRecord[]) => ws.map((w) => w.workloadId);

type Role = 'admin' | 'lead' | 'member' | 'noTeams' | 'otherOrgAdmin';
const ROLES: Role[] = ['admin', 'lead', 'member', 'noTeams', 'otherOrgAdmin'];

interface Expected {
  /** Visible workloads in list order (submitted_at descending). */
  list: WorkloadRecord[];
  stats: { total_workloads: number; total_gpu_hours: number; average_duration_seconds: number; success_rate: number; average_queue_seconds: number };
  byInitiative: { initiative_id: string; gpu_hours: number }[];
  /** sort_by=gpu_hours, desc. */
  byGpuHours: WorkloadRecord[];
  gpuHoursAverage: number | null;
  /** Default sort (gpu_utilization) with the telemetry of TELEMETRY below. */
  byUtilization: WorkloadRecord[];
  utilizationAverage: number | null;
  capacity: { allocated: number; used: number; remaining: number; activeGpus: number; burnPerDay: number; initiatives: string[]; pools: string[] };
}

const EXPECTED: Record<Role, Expected> = {
  admin: {
    list: [A2, L2, V2, V1, L1, A1],
    stats: { total_workloads: 6, total_gpu_hours: 39, average_duration_seconds: 8400, success_rate: 0.75, average_queue_seconds: 900, ...NO_USAGE_TOTALS },
    byInitiative: [{ initiative_id: 'llm', gpu_hours: 24 }, { initiative_id: 'vision', gpu_hours: 8 }, { initiative_id: 'audio', gpu_hours: 7 }],
    byGpuHours: [L1, L2, V1, A1, A2, V2],
    gpuHoursAverage: 6.5,
    byUtilization: [L1, L2, V1, V2, A1, A2],
    utilizationAverage: 65,
    capacity: { allocated: 1000, used: 39, remaining: 961, activeGpus: 7, burnPerDay: 5.5714, initiatives: ['llm', 'vision', 'audio'], pools: ['h100'] },
  },
  lead: {
    list: [L2, V2, V1, L1],
    stats: { total_workloads: 4, total_gpu_hours: 32, average_duration_seconds: 8100, success_rate: 0.6667, average_queue_seconds: 900, ...NO_USAGE_TOTALS },
    byInitiative: [{ initiative_id: 'llm', gpu_hours: 24 }, { initiative_id: 'vision', gpu_hours: 8 }],
    byGpuHours: [L1, L2, V1, V2],
    gpuHoursAverage: 8,
    byUtilization: [L1, L2, V1, V2],
    utilizationAverage: 75,
    capacity: { allocated: 500, used: 32, remaining: 468, activeGpus: 4, burnPerDay: 4.5714, initiatives: ['llm', 'vision'], pools: ['h100'] },
  },
  member: {
    list: [V2, V1],
    stats: { total_workloads: 2, total_gpu_hours: 8, average_duration_seconds: 9000, success_rate: 0.5, average_queue_seconds: 0, ...NO_USAGE_TOTALS },
    byInitiative: [{ initiative_id: 'vision', gpu_hours: 8 }],
    byGpuHours: [V1, V2],
    gpuHoursAverage: 4,
    byUtilization: [V1, V2],
    utilizationAverage: 65,
    capacity: { allocated: 200, used: 8, remaining: 192, activeGpus: 0, burnPerDay: 1.1429, initiatives: ['vision'], pools: ['h100'] },
  },
  noTeams: {
    list: [],
    stats: { total_workloads: 0, total_gpu_hours: 0, average_duration_seconds: 0, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE_TOTALS },
    byInitiative: [],
    byGpuHours: [],
    gpuHoursAverage: null,
    byUtilization: [],
    utilizationAverage: null,
    capacity: { allocated: 0, used: 0, remaining: 0, activeGpus: 0, burnPerDay: 0, initiatives: [], pools: ['h100'] },
  },
  otherOrgAdmin: {
    list: [G2, G1],
    stats: { total_workloads: 2, total_gpu_hours: 46, average_duration_seconds: 19800, success_rate: 1, average_queue_seconds: 1800, ...NO_USAGE_TOTALS },
    byInitiative: [{ initiative_id: 'llm', gpu_hours: 40 }, { initiative_id: 'vision', gpu_hours: 6 }],
    byGpuHours: [G1, G2],
    gpuHoursAverage: 23,
    byUtilization: [G1, G2],
    utilizationAverage: 97,
    // globex has no budget: allocated 0, used as measured, remaining = −used, no pools or initiatives.
    capacity: { allocated: 0, used: 46, remaining: -46, activeGpus: 1, burnPerDay: 6.5714, initiatives: [], pools: [] },
  },
};

// Last-hour gpu_utilization the (stubbed) telemetry reports for every workload, whatever its org.
const TELEMETRY = new Map<string, { avg: number; current: number }>([
  [L1.workloadId, { avg: 90, current: 91 }],
  [L2.workloadId, { avg: 80, current: 81 }],
  [V1.workloadId, { avg: 70, current: 71 }],
  [V2.workloadId, { avg: 60, current: 61 }],
  [A1.workloadId, { avg: 50, current: 51 }],
  [A2.workloadId, { avg: 40, current: 41 }],
  [G1.workloadId, { avg: 99, current: 99 }],
  [G2.workloadId, { avg: 95, current: 95 }],
]);

const ACME_BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'total',
  allocatedGpuHours: 1000,
  pools: [{ poolId: 'h100', name: 'H100 on-demand', allocatedGpuHours: 500, instanceTypes: ['p5.48xlarge'] }],
  initiatives: [
    { initiativeId: 'llm', name: 'LLM', allocatedGpuHours: 300, namespaces: [] },
    { initiativeId: 'vision', name: 'Vision', allocatedGpuHours: 200, namespaces: [] },
    { initiativeId: 'audio', name: 'Audio', allocatedGpuHours: 100, namespaces: [] },
  ],
};

/** [name in test titles, path requested] of every authenticated endpoint. */
const AUTHENTICATED_PATHS: [string, string][] = [
  ['GET /v1/workloads', '/v1/workloads'],
  ['GET /v1/workloads/{workload_id}', `/v1/workloads/${L1.workloadId}`],
  ['GET /v1/workloads/stats', '/v1/workloads/stats'],
  ['GET /v1/workloads/{workload_id}/metrics', `/v1/workloads/${L1.workloadId}/metrics`],
  ['GET /v1/workloads/metrics', '/v1/workloads/metrics'],
  ['GET /v1/workloads/metrics?sort_by=gpu_hours', '/v1/workloads/metrics?sort_by=gpu_hours'],
  ['GET /v1/capacity', '/v1/capacity'],
  ['GET /v1/fleet', '/v1/fleet'],
  ['GET /v1/fleet/nodes', '/v1/fleet/nodes'],
  ['GET /v1/chargeback', '/v1/chargeback?month=2026-01'],
];

/** Endpoints that take an initiative_id filter. */
const INITIATIVE_FILTERED_PATHS = ['/v1/workloads', '/v1/workloads/stats', '/v1/workloads/metrics', '/v1/workloads/metrics?sort_by=gpu_hours', '/v1/capacity'];

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

describe('API roles: what each caller sees on every endpoint', () => {
  let t: TestService;
  const sandbox = sinon.createSandbox();
  const caller = (role: Role): Caller => t.callers[role];

  before(async () => {
    // Telemetry off: the ranking reads noTelemetry, stubbed below with figures for every workload.
    t = await startTestService({ env: { GPUCAP_TELEMETRY_ENABLED: 'false' } });
    await t.service.store.upsertWorkloads(ALL);
    await t.service.store.upsertPodIntervals(ALL.map((w) => aPodInterval(w)));
    // Give the (empty) telemetry and capacity sources data, so the ranking and the budgets have
    // something to filter by role; the sampler's own path is tested in test/telemetry/.
    sandbox.stub(noTelemetry, 'lastHour').resolves(TELEMETRY);
    sandbox.stub(noBudgets, 'budgetFor').callsFake((organizationId: string) => (organizationId === 'acme' ? ACME_BUDGET : undefined));
  });
  after(async () => {
    sandbox.restore();
    await t.stop();
  });

  for (const role of ROLES) {
    const expected = EXPECTED[role];
    const visible = new Set(ids(...expected.list));

    describe(`as ${role}`, () => {
      it(`list returns exactly the workloads ${role} may see, newest first`, async () => {
        const res = await t.get('/v1/workloads', { as: caller(role) });
        expect(res.status).to.equal(200);
        expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal(ids(...expected.list));
        expect(res.body.metadata).to.deep.equal({ total_count: expected.list.length });
      });

      it(`get answers 200 for the workloads ${role} may see and 404 NOT_FOUND for every other one`, async () => {
        const statuses: Record<string, number> = {};
        const expectedStatuses: Record<string, number> = {};
        for (const w of ALL) {
          const res = await t.get(`/v1/workloads/${w.workloadId}`, { as: caller(role) });
          statuses[w.workloadId] = res.status;
          expectedStatuses[w.workloadId] = visible.has(w.workloadId) ? 200 : 404;
          if (res.status === 200) expect(res.body.data.workload_id).to.equal(w.workloadId);
          else expect(res.body.error).to.deep.equal({ code: 'NOT_FOUND', message: `Workload "${w.workloadId}" was not found`, details: [] });
        }
        expect(statuses).to.deep.equal(expectedStatuses);
      });

      it(`workload metrics answer 200 for the workloads ${role} may see and 404 NOT_FOUND for every other one`, async () => {
        const statuses: Record<string, number> = {};
        const expectedStatuses: Record<string, number> = {};
        for (const w of ALL) {
          const res = await t.get(`/v1/workloads/${w.workloadId}/metrics`, { as: caller(role) });
          statuses[w.workloadId] = res.status;
          expectedStatuses[w.workloadId] = visible.has(w.workloadId) ? 200 : 404;
          if (res.status === 200) expect(res.body.data.workload_id).to.equal(w.workloadId);
          else expect(res.body.error.code).to.equal('NOT_FOUND');
        }
        expect(statuses).to.deep.equal(expectedStatuses);
      });

      it(`stats sum only the workloads ${role} may see`, async () => {
        const res = await t.get('/v1/workloads/stats', { as: caller(role) });
        expect(res.status).to.equal(200);
        expect(res.body.data).to.deep.equal({ summary: expected.stats, grouped: [] });
      });

      it(`stats grouped by initiative_id list only the initiatives ${role} may see`, async () => {
        const res = await t.get('/v1/workloads/stats?group_by=initiative_id', { as: caller(role) });
        expect(res.status).to.equal(200);
        expect(res.body.data.grouped.map((g: { initiative_id: string; gpu_hours: number }) => ({ initiative_id: g.initiative_id, gpu_hours: g.gpu_hours }))).to.deep.equal(
          expected.byInitiative,
        );
      });

      it(`ranking by gpu_hours ranks only the workloads ${role} may see`, async () => {
        const res = await t.get('/v1/workloads/metrics?sort_by=gpu_hours', { as: caller(role) });
        expect(res.status).to.equal(200);
        expect(res.body.data.workloads.map((e: { workload_id: string }) => e.workload_id)).to.deep.equal(ids(...expected.byGpuHours));
        expect(res.body.data.scope_average).to.deep.equal({ gpu_hours: expected.gpuHoursAverage });
        expect(res.body.metadata).to.deep.equal({ total_count: expected.byGpuHours.length });
      });

      it(`ranking by the default metric ranks only the workloads ${role} may see, even when telemetry has others`, async () => {
        const res = await t.get('/v1/workloads/metrics', { as: caller(role) });
        expect(res.status).to.equal(200);
        expect(res.body.data.workloads.map((e: { workload_id: string }) => e.workload_id)).to.deep.equal(ids(...expected.byUtilization));
        expect(res.body.data.scope_average).to.deep.equal({ gpu_utilization: expected.utilizationAverage });
        expect(res.body.metadata).to.deep.equal({ total_count: expected.byUtilization.length });
      });

      it(`capacity covers only the teams ${role} may see, pools listed for every role`, async () => {
        const res = await t.get('/v1/capacity', { as: caller(role) });
        expect(res.status).to.equal(200);
        const data = res.body.data;
        expect(data.organization_id).to.equal(caller(role).organizationId);
        const { projected_exhaustion_at: _exhaustion, projected_used_gpu_hours_at_period_end: _atPeriodEnd, ...figures } = data.summary;
        // All of it inside the trailing week: the burn rate is the scope's own use / 7.
        expect(figures).to.deep.equal({
          total_allocated_gpu_hours: expected.capacity.allocated,
          total_used_gpu_hours: expected.capacity.used,
          total_remaining_gpu_hours: expected.capacity.remaining,
          current_active_gpus: expected.capacity.activeGpus,
          burn_rate_gpu_hours_per_day: expected.capacity.burnPerDay,
        });
        expect(data.initiatives.map((i: { initiative_id: string }) => i.initiative_id)).to.deep.equal(expected.capacity.initiatives);
        expect(data.pools.map((p: { pool_id: string }) => p.pool_id)).to.deep.equal(expected.capacity.pools);
      });

      // Nodes are no team's: an ORG_ADMIN reads its organization's fleet, a team role none of it.
      const admin = role === 'admin' || role === 'otherOrgAdmin';
      it(`the fleet answers ${role} ${admin ? '200' : '403 FORBIDDEN'}`, async () => {
        for (const path of ['/v1/fleet', '/v1/fleet/nodes', '/v1/fleet/nodes?state=ready']) {
          const res = await t.get(path, { as: caller(role) });
          expect(res.status, path).to.equal(admin ? 200 : 403);
          if (!admin) expect(res.body.error).to.deep.equal({ code: 'FORBIDDEN', message: 'The fleet is shared infrastructure: only an ORG_ADMIN may read it', details: [] });
        }
      });

      // Every team's bill: a team role would read the others'.
      it(`the chargeback answers ${role} ${admin ? '200' : '403 FORBIDDEN'}`, async () => {
        const res = await t.get('/v1/chargeback?month=2026-01', { as: caller(role) });
        expect(res.status).to.equal(admin ? 200 : 403);
        if (!admin) expect(res.body.error.code).to.equal('FORBIDDEN');
      });
    });
  }

  describe('capacity figures per initiative and pool', () => {
    // The `total` period has no end to project to; every use lies inside the trailing week.
    const burning = (perDay: number, exhaustion: string | null) => ({
      burn_rate_gpu_hours_per_day: Math.round(perDay * 1e4) / 1e4,
      projected_used_gpu_hours_at_period_end: null,
      projected_exhaustion_at: exhaustion,
    });
    // The service watches no cluster here: it sees no GPU node, so no pool's hardware.
    const noNodes = { capacity_gpu_hours_in_period: null, over_committed: false };
    it('capacity shows each visible initiative\'s own budget and use, and the pool\'s use by the caller\'s teams', async () => {
      const res = await t.get('/v1/capacity', { as: caller('lead') });
      expect(res.body.data.initiatives).to.deep.equal([
        { initiative_id: 'llm', name: 'LLM', allocated_gpu_hours: 300, used_gpu_hours: 24, remaining_gpu_hours: 276, ...burning(24 / 7, '2027-02-09T00:00:00.000Z') },
        { initiative_id: 'vision', name: 'Vision', allocated_gpu_hours: 200, used_gpu_hours: 8, remaining_gpu_hours: 192, ...burning(8 / 7, '2027-05-07T12:00:00.000Z') },
      ]);
      // p5.48xlarge in acme: L1 16 + L2 8; globex's G1 on the same instance type never counts.
      expect(res.body.data.pools).to.deep.equal([
        { pool_id: 'h100', name: 'H100 on-demand', allocated_gpu_hours: 500, used_gpu_hours: 24, remaining_gpu_hours: 476, ...burning(24 / 7, '2027-04-08T08:00:00.000Z'), instance_types: ['p5.48xlarge'], ...noNodes },
      ]);
    });

    it('capacity never shows a team caller other teams\' use of a pool', async () => {
      // The member's team (vision) runs nothing on p5.48xlarge; llm's 24 hours there stay invisible.
      const res = await t.get('/v1/capacity', { as: caller('member') });
      expect(res.body.data.pools).to.deep.equal([
        { pool_id: 'h100', name: 'H100 on-demand', allocated_gpu_hours: 500, used_gpu_hours: 0, remaining_gpu_hours: 500, ...burning(0, null), instance_types: ['p5.48xlarge'], ...noNodes },
      ]);
    });

    it('capacity narrowed by initiative_id inside the caller\'s teams covers that initiative only', async () => {
      const res = await t.get('/v1/capacity?initiative_id=llm', { as: caller('lead') });
      expect(res.status).to.equal(200);
      expect(res.body.data.summary).to.deep.equal({ total_allocated_gpu_hours: 300, total_used_gpu_hours: 24, total_remaining_gpu_hours: 276, current_active_gpus: 4, ...burning(24 / 7, '2027-02-09T00:00:00.000Z') });
      expect(res.body.data.initiatives.map((i: { initiative_id: string }) => i.initiative_id)).to.deep.equal(['llm']);
    });
  });

  describe('initiative_id filter', () => {
    const outside: [Role, string][] = [
      ['lead', 'audio'],
      ['member', 'llm'],
      ['noTeams', 'vision'],
    ];
    for (const path of INITIATIVE_FILTERED_PATHS) {
      for (const [role, initiative] of outside) {
        it(`GET ${path} returns 403 FORBIDDEN when initiative_id=${initiative} is outside ${role}'s teams`, async () => {
          const res = await t.get(withQuery(path, `initiative_id=${initiative}`), { as: caller(role) });
          expect(res.status).to.equal(403);
          expect(res.body.error).to.deep.equal({ code: 'FORBIDDEN', message: `Initiative "${initiative}" is outside the caller's teams`, details: [] });
        });
      }

      it(`GET ${path} accepts any initiative_id of the organization from an ORG_ADMIN`, async () => {
        const res = await t.get(withQuery(path, 'initiative_id=audio'), { as: caller('admin') });
        expect(res.status).to.equal(200);
      });
    }

    it('list narrowed to an initiative inside the caller\'s teams returns only that initiative', async () => {
      const res = await t.get('/v1/workloads?initiative_id=llm', { as: caller('lead') });
      expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal(ids(L2, L1));
    });

    it('list narrowed to an initiative name another organization also uses returns only the caller\'s organization', async () => {
      const res = await t.get('/v1/workloads?initiative_id=llm', { as: caller('admin') });
      expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal(ids(L2, L1));
    });

    it('stats narrowed to an initiative inside the caller\'s teams sum only that initiative', async () => {
      const res = await t.get('/v1/workloads/stats?initiative_id=vision', { as: caller('lead') });
      expect(res.body.data.summary).to.deep.equal({ total_workloads: 2, total_gpu_hours: 8, average_duration_seconds: 9000, success_rate: 0.5, average_queue_seconds: 0, ...NO_USAGE_TOTALS });
    });
  });

  describe('organization', () => {
    for (const [name, path] of AUTHENTICATED_PATHS) {
      it(`${name} returns 403 FORBIDDEN when X-Organization-Id is another organization than the credential's`, async () => {
        const res = await t.get(path, { as: caller('admin'), org: 'globex' });
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('FORBIDDEN');
        expect(res.body.error.message).to.equal('Organization "globex" is not the organization of the credential');
      });

      it(`${name} returns 400 VALIDATION_ERROR naming the header when X-Organization-Id is missing`, async () => {
        const res = await t.get(path, { as: caller('member'), org: null });
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        expect(res.body.error.details).to.have.length(1);
        expect(res.body.error.details[0]).to.include({ location: 'header', field: 'X-Organization-Id' });
        expect(res.body.error.details[0].message).to.be.a('string').and.not.equal('');
      });
    }

    it('list returns 403 FORBIDDEN when organization_id is not the caller\'s organization', async () => {
      const res = await t.get('/v1/workloads?organization_id=globex', { as: caller('admin') });
      expect(res.status).to.equal(403);
      expect(res.body.error).to.deep.equal({ code: 'FORBIDDEN', message: 'Organization "globex" is not the caller\'s organization', details: [] });
    });

    it('list accepts organization_id equal to the caller\'s organization and filters nothing more', async () => {
      const res = await t.get('/v1/workloads?organization_id=acme', { as: caller('lead') });
      expect(res.status).to.equal(200);
      expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal(ids(...EXPECTED.lead.list));
    });
  });

  describe('credentials', () => {
    const invalid: [string, string][] = [
      ['an API token that is not in the token file', `Bearer ${generateApiToken()}`],
      ['a malformed API token', 'Bearer gca_short'],
      ['a token that is neither an API token nor a JWT', 'Bearer opensesame'],
      ['a JWT while JWT verification is off', 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
      ['another scheme than Bearer', `Basic ${Buffer.from('admin:admin').toString('base64')}`],
    ];

    for (const [name, path] of AUTHENTICATED_PATHS) {
      it(`${name} returns 401 UNAUTHENTICATED with a Bearer challenge when no credential is sent`, async () => {
        const res = await t.get(path, { as: null, org: 'acme' });
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('UNAUTHENTICATED');
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer /);
      });

      it(`${name} returns 401 UNAUTHENTICATED with an invalid_token challenge for an unknown API token`, async () => {
        const res = await t.get(path, { as: null, org: 'acme', headers: { Authorization: `Bearer ${generateApiToken()}` } });
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('UNAUTHENTICATED');
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer .*error="invalid_token"/);
      });
    }

    for (const [what, authorization] of invalid) {
      it(`list returns 401 UNAUTHENTICATED with a Bearer challenge for ${what}`, async () => {
        const res = await t.get('/v1/workloads', { as: null, org: 'acme', headers: { Authorization: authorization } });
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('UNAUTHENTICATED');
        expect(res.body.request_id).to.be.a('string');
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer realm="gpu-capacity-api", error="invalid_token"/);
        expect(res.body).to.not.have.property('data');
      });
    }

    it('a missing credential is answered 401 before the missing X-Organization-Id', async () => {
      const res = await t.get('/v1/workloads', { as: null, org: null });
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="gpu-capacity-api"');
    });
  });

  describe('health', () => {
    it('health answers 200 healthy without a credential or X-Organization-Id', async () => {
      const res = await t.get('/v1/health', { as: null, org: null });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.include({ status: 'healthy' });
      // Telemetry is off here: no exporters check for a feed that does not run.
      expect(res.body.data.checks).to.deep.equal([{ name: 'index', status: 'ok' }]);
      expect(res.body.data.version).to.match(/^\d+\.\d+\.\d+/);
    });

    it('health answers 200 whatever credential or organization is sent, since it checks none', async () => {
      const headerSets: Record<string, string>[] = [{ Authorization: 'Bearer opensesame' }, { Authorization: `Bearer ${generateApiToken()}`, 'X-Organization-Id': 'globex' }];
      for (const headers of headerSets) {
        const res = await t.get('/v1/health', { as: null, org: null, headers });
        expect(res.status, JSON.stringify(headers)).to.equal(200);
        expect(res.body.data.status).to.equal('healthy');
      }
    });

    for (const role of ROLES) {
      it(`health answers the same to ${role} as to an anonymous caller`, async () => {
        const [res, anonymous] = [await t.get('/v1/health', { as: caller(role) }), await t.get('/v1/health', { as: null, org: null })];
        expect(res.status).to.equal(200);
        expect(Object.keys(res.body.data).sort()).to.deep.equal(['checks', 'status', 'timestamp', 'version']);
        expect(res.body.data).to.deep.equal(anonymous.body.data);
      });
    }
  });
});
