// Capacity with a budget: the period clips usage, pool_id narrows pools, an unknown pool is 404.
import { expect } from 'chai';
import sinon from 'sinon';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { noBudgets } from '../../src/query/empty-sources.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 1000,
  pools: [
    { poolId: 'h100', name: 'H100', allocatedGpuHours: 600, instanceTypes: ['p5.48xlarge'] },
    { poolId: 'l40s', name: 'L40S', allocatedGpuHours: 400, instanceTypes: ['g6e.12xlarge'] },
  ],
  initiatives: [{ initiativeId: 'llm', name: 'LLM', allocatedGpuHours: 700, namespaces: [] }],
};

/** The allocation figures alone: the forecasts have their own test (capacity-forecast.test.ts). */
function withoutForecasts(data: JsonBody) {
  const drop = ({ burn_rate_gpu_hours_per_day: _b, projected_used_gpu_hours_at_period_end: _p, projected_exhaustion_at: _e, ...rest }: JsonBody) => rest;
  return { summary: drop(data.summary), pools: data.pools.map(drop), initiatives: data.initiatives.map(drop) };
}

describe('API capacity with a budget', () => {
  let t: TestService;
  before(async () => {
    // The capacity ConfigMap source arrives later; until then a budget is injected at the source's port.
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    // 8 GPUs from Oct 31 22:00 to Nov 1 02:00: only the 2 hours inside November count (16 GPU-hours).
    const straddling = aWorkload({ instanceType: 'p5.48xlarge', gpuCount: 8, submittedAt: Date.parse('2026-10-31T21:00:00Z'), startedAt: Date.parse('2026-10-31T22:00:00Z'), completedAt: Date.parse('2026-11-01T02:00:00Z') });
    // 2 GPUs running since Nov 20 10:00: 4 GPU-hours up to now.
    const running = aWorkload({ instanceType: 'g6e.12xlarge', gpuCount: 2, status: 'running', submittedAt: Date.parse('2026-11-20T09:00:00Z'), startedAt: Date.parse('2026-11-20T10:00:00Z'), completedAt: null, exitCode: null });
    await t.service.store.upsertWorkloads([straddling, running]);
    await t.service.store.upsertPodIntervals([aPodInterval(straddling), aPodInterval(running)]);
  });
  after(async () => {
    sinon.restore();
    await t.stop();
  });

  // No cluster is watched: the service sees no GPU node, so no pool's hardware.
  const noNodes = { capacity_gpu_hours_in_period: null, over_committed: false };

  it('counts only GPU time inside the current month, running workloads up to now', async () => {
    const res = await t.get('/v1/capacity');
    expect(res.status).to.equal(200);
    const { summary, pools, initiatives } = withoutForecasts(res.body.data);
    expect(summary).to.deep.equal({ total_allocated_gpu_hours: 1000, total_used_gpu_hours: 20, total_remaining_gpu_hours: 980, current_active_gpus: 2 });
    expect(pools).to.deep.equal([
      { pool_id: 'h100', name: 'H100', allocated_gpu_hours: 600, used_gpu_hours: 16, remaining_gpu_hours: 584, instance_types: ['p5.48xlarge'], ...noNodes },
      { pool_id: 'l40s', name: 'L40S', allocated_gpu_hours: 400, used_gpu_hours: 4, remaining_gpu_hours: 396, instance_types: ['g6e.12xlarge'], ...noNodes },
    ]);
    expect(initiatives).to.deep.equal([{ initiative_id: 'llm', name: 'LLM', allocated_gpu_hours: 700, used_gpu_hours: 20, remaining_gpu_hours: 680 }]);
  });

  it('narrows pools to pool_id', async () => {
    const res = await t.get('/v1/capacity?pool_id=l40s');
    expect(res.body.data.pools.map((p: { pool_id: string }) => p.pool_id)).to.deep.equal(['l40s']);
  });

  it('narrows to no pool for a pool_id the budget does not name, like an initiative_id that matches nothing', async () => {
    const pool = await t.get('/v1/capacity?pool_id=a100');
    expect(pool.status).to.equal(200);
    expect(pool.body.data.pools).to.deep.equal([]);
    const initiative = await t.get('/v1/capacity?initiative_id=nope');
    expect(initiative.status).to.equal(200);
    expect(initiative.body.data.initiatives).to.deep.equal([]);
    expect(initiative.body.data.summary).to.deep.include({ total_allocated_gpu_hours: 0, total_used_gpu_hours: 0 });
  });

  it('lets remaining go negative once used exceeds the allocation', async () => {
    t.clock.set('2026-11-30T23:00:00Z'); // the running workload has now used 2 × 253 h
    const res = await t.get('/v1/capacity?pool_id=l40s');
    t.clock.set('2026-11-20T12:00:00Z');
    expect(res.body.data.pools[0]).to.include({ used_gpu_hours: 506, remaining_gpu_hours: -106 });
  });
});
