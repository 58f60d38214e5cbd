// Budget forecasts through the real service, on a fixed clock moved across a period boundary: the
// trailing week spans November and December while `used` restarts with the month.
import { expect } from 'chai';
import sinon from 'sinon';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { noBudgets } from '../../src/query/empty-sources.js';
import type { JsonBody } from '../support/service-harness.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 1000,
  pools: [
    { poolId: 'h100', name: 'H100', allocatedGpuHours: 600, instanceTypes: ['p5.48xlarge'] },
    { poolId: 'l40s', name: 'L40S', allocatedGpuHours: 50, instanceTypes: ['g6e.12xlarge'] },
  ],
  initiatives: [
    { initiativeId: 'llm', name: 'LLM', allocatedGpuHours: 700, namespaces: [] },
    { initiativeId: 'vision', name: 'Vision', allocatedGpuHours: 40, namespaces: [] },
  ],
};

const forecastOf = (entry: JsonBody) => ({
  burn: entry.burn_rate_gpu_hours_per_day,
  atPeriodEnd: entry.projected_used_gpu_hours_at_period_end,
  exhaustion: entry.projected_exhaustion_at,
});

describe('API capacity forecasts', () => {
  let t: TestService;
  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    t = await startTestService({ now: '2026-11-29T00:00:00Z' });
    // llm: 4 GPUs for 48 h, Nov 25–27 (192 GPU-h). vision: 2 GPUs running since Nov 28 (48 GPU-h a day).
    const llm = aWorkload({ workloadId: 'fc000000-0000-4000-8000-000000000001', instanceType: 'p5.48xlarge', gpuCount: 4, submittedAt: Date.parse('2026-11-24T23:00:00Z'), startedAt: Date.parse('2026-11-25T00:00:00Z'), completedAt: Date.parse('2026-11-27T00:00:00Z') });
    const vision = aWorkload({ workloadId: 'fc000000-0000-4000-8000-000000000002', initiativeId: 'vision', instanceType: 'g6e.12xlarge', gpuCount: 2, status: 'running', submittedAt: Date.parse('2026-11-28T00:00:00Z'), startedAt: Date.parse('2026-11-28T00:00:00Z'), completedAt: null, exitCode: null });
    // globex has no budget: 1 GPU for a day, Nov 26.
    const globex = aWorkload({ workloadId: 'fc000000-0000-4000-8000-000000000003', organizationId: 'globex', gpuCount: 1, submittedAt: Date.parse('2026-11-26T00:00:00Z'), startedAt: Date.parse('2026-11-26T00:00:00Z'), completedAt: Date.parse('2026-11-27T00:00:00Z') });
    await t.service.store.upsertWorkloads([llm, vision, globex]);
    await t.service.store.upsertPodIntervals([aPodInterval(llm), aPodInterval(vision), aPodInterval(globex)]);
  });
  afterEach(() => t.clock.set('2026-11-29T00:00:00Z'));
  after(async () => {
    sinon.restore();
    await t.stop();
  });

  it('forecasts each budget entry two days before the month ends', async () => {
    const { data } = (await t.get('/v1/capacity')).body;
    // The trailing week [Nov 22, Nov 29) holds 192 + 48 GPU-h: 240 / 7 per day.
    expect(data.summary).to.deep.include({ total_used_gpu_hours: 240, total_remaining_gpu_hours: 760 });
    expect(forecastOf(data.summary)).to.deep.equal({ burn: 34.2857, atPeriodEnd: 308.5714, exhaustion: null });
    const [h100, l40s] = data.pools;
    expect(forecastOf(h100)).to.deep.equal({ burn: 27.4286, atPeriodEnd: 246.8571, exhaustion: null });
    // 2 GPU-h left at 48 / 7 per day: 7 hours.
    expect(forecastOf(l40s)).to.deep.equal({ burn: 6.8571, atPeriodEnd: 61.7143, exhaustion: '2026-11-29T07:00:00.000Z' });
    const [llm, vision] = data.initiatives;
    expect(forecastOf(llm)).to.deep.equal({ burn: 27.4286, atPeriodEnd: 246.8571, exhaustion: null });
    expect(vision, 'already overspent: exhausted as of the reading').to.deep.include({ remaining_gpu_hours: -8, projected_exhaustion_at: '2026-11-29T00:00:00.000Z' });
  });

  it('keeps the trailing week across the boundary while used restarts with December', async () => {
    t.clock.set('2026-12-02T00:00:00Z');
    const { data } = (await t.get('/v1/capacity')).body;
    // [Nov 25, Dec 2): llm 192 + vision 4 days × 48 = 384 GPU-h; used since Dec 1: vision's 48.
    expect(data.summary).to.deep.include({ total_used_gpu_hours: 48, total_remaining_gpu_hours: 952 });
    // 952 left at 384 / 7 per day: 17 d 8 h 30 min. The month has 30 days left: 48 + 30 × 384 / 7.
    expect(forecastOf(data.summary)).to.deep.equal({ burn: 54.8571, atPeriodEnd: 1693.7143, exhaustion: '2026-12-19T08:30:00.000Z' });
    // l40s: 2 left at 192 / 7 per day: 1 h 45 min.
    expect(forecastOf(data.pools[1])).to.deep.include({ burn: 27.4286, exhaustion: '2026-12-02T01:45:00.000Z' });
  });

  it('scopes the burn rate as it scopes used: a MEMBER of vision burns only vision', async () => {
    const { data } = (await t.get('/v1/capacity', { as: t.callers.member })).body;
    expect(data.summary).to.deep.include({ total_allocated_gpu_hours: 40, total_used_gpu_hours: 48, burn_rate_gpu_hours_per_day: 6.8571 });
    expect(forecastOf(data.pools[0]), 'the H100 pool, none of it vision').to.deep.equal({ burn: 0, atPeriodEnd: 0, exhaustion: null });
    expect(data.initiatives.map((i: JsonBody) => i.initiative_id)).to.deep.equal(['vision']);
  });

  it('says nothing is projected for an organization without a budget, but still reports its burn', async () => {
    const { data } = (await t.get('/v1/capacity', { as: t.callers.otherOrgAdmin })).body;
    expect(data.summary).to.deep.include({ total_allocated_gpu_hours: 0, total_used_gpu_hours: 24 });
    expect(forecastOf(data.summary)).to.deep.equal({ burn: 3.4286, atPeriodEnd: null, exhaustion: null });
  });
});
