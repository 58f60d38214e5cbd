// Every endpoint's success shape, field for field, with values a user can check by hand.
import { expect } from 'chai';
import { listWorkloadsEndpoint, getWorkloadEndpoint } from '../../src/api/routes/workloads.js';
import { workloadStatsEndpoint } from '../../src/api/routes/stats.js';
import { rankingEndpoint, workloadMetricsEndpoint } from '../../src/api/routes/metrics.js';
import { capacityEndpoint } from '../../src/api/routes/capacity.js';
import { healthEndpoint } from '../../src/api/routes/health.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { expectShape } from '../support/shape.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';
import { NO_USAGE } from '../support/no-usage.js';

const finished = aWorkload({
  workloadId: 'a0000000-0000-4000-8000-000000000001',
  name: 'llama-pretrain',
  namespace: 'llm-train',
  clusterId: 'gpu-east',
  initiativeId: 'llm',
  submittedBy: 'alice',
  instanceType: 'p5.48xlarge',
  gpuCount: 8,
  status: 'failed',
  exitCode: 137,
  isManaged: true,
  submittedAt: Date.parse('2026-11-19T08:00:00Z'),
  startedAt: Date.parse('2026-11-19T08:00:30Z'),
  completedAt: Date.parse('2026-11-19T10:00:30Z'),
});
const running = aWorkload({
  workloadId: 'a0000000-0000-4000-8000-000000000002',
  name: 'vit-finetune',
  namespace: 'vision',
  initiativeId: 'vision',
  submittedBy: 'bob',
  instanceType: 'a3-highgpu-8g',
  gpuCount: 2,
  kind: 'Pod',
  status: 'running',
  exitCode: null,
  isManaged: false,
  submittedAt: Date.parse('2026-11-20T11:00:00Z'),
  startedAt: Date.parse('2026-11-20T11:30:00Z'),
  completedAt: null,
});
const pending = aWorkload({
  workloadId: 'a0000000-0000-4000-8000-000000000003',
  name: 'queued',
  status: 'pending',
  submittedAt: Date.parse('2026-11-20T11:59:00Z'),
  startedAt: null,
  completedAt: null,
  exitCode: null,
  instanceType: 'unknown',
});

describe('API contract: success shapes', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
    await t.service.store.upsertWorkloads([finished, running, pending]);
    await t.service.store.upsertPodIntervals([aPodInterval(finished), aPodInterval(running)]);
  });
  after(() => t.stop());

  it('list returns list items (exactly the nine seed fields), newest first, with next_token and total_count', async () => {
    const res = await t.get('/v1/workloads');
    expect(res.status).to.equal(200);
    expectShape(res.body, listWorkloadsEndpoint.response);
    expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal([pending.workloadId, running.workloadId, finished.workloadId]);
    expect(res.body.data.workloads[1]).to.deep.equal({
      workload_id: running.workloadId,
      name: 'vit-finetune',
      status: 'running',
      submitted_by: 'bob',
      initiative_id: 'vision',
      instance_type: 'a3-highgpu-8g',
      gpu_count: 2,
      submitted_at: '2026-11-20T11:00:00.000Z',
      started_at: '2026-11-20T11:30:00.000Z',
    });
    expect(res.body.data.workloads[0].started_at).to.equal(null);
    expect(res.body.metadata).to.deep.equal({ total_count: 3 }); // no next_token on the last page
    expect(res.body.request_id).to.be.a('string').and.not.empty;
  });

  it('get returns the full record of a finished workload', async () => {
    const res = await t.get(`/v1/workloads/${finished.workloadId}`);
    expect(res.status).to.equal(200);
    expectShape(res.body, getWorkloadEndpoint.response);
    expect(res.body.data).to.deep.equal({
      workload_id: finished.workloadId,
      name: 'llama-pretrain',
      status: 'failed',
      submitted_by: 'alice',
      initiative_id: 'llm',
      instance_type: 'p5.48xlarge',
      gpu_count: 8,
      submitted_at: '2026-11-19T08:00:00.000Z',
      started_at: '2026-11-19T08:00:30.000Z',
      completed_at: '2026-11-19T10:00:30.000Z',
      duration_seconds: 7200,
      gpu_hours_used: 16,
      exit_code: 137,
      is_managed: true,
      cluster_id: 'gpu-east',
      namespace: 'llm-train',
      // Additions to the contract: submitted 08:00:00, started 08:00:30; failed with exit code 137.
      queue_seconds: 30,
      failure_reason: 'nonzero_exit',
      // Written without a share (as rows indexed before shares were counted): its devices whole, how unknown.
      allocated_gpus: 8,
      gpu_sharing: null,
      gpu_model: null,
      // No GPU was sampled (docs/api.md "GPU usage").
      ...NO_USAGE,
    });
  });

  it('get returns a running workload with duration and GPU-hours current at the time of reading', async () => {
    const first = await t.get(`/v1/workloads/${running.workloadId}`);
    expect(first.body.data).to.include({ completed_at: null, exit_code: null, duration_seconds: 1800, gpu_hours_used: 1 });
    t.clock.advance(30 * 60_000);
    const later = await t.get(`/v1/workloads/${running.workloadId}`);
    t.clock.advance(-30 * 60_000);
    expect(later.body.data).to.include({ duration_seconds: 3600, gpu_hours_used: 2 });
  });

  it('stats returns summary and grouped entries holding the group_by field', async () => {
    const res = await t.get('/v1/workloads/stats?group_by=instance_type');
    expect(res.status).to.equal(200);
    expectShape(res.body, workloadStatsEndpoint.response);
    expect(res.body.data.summary).to.deep.equal({
      total_workloads: 3, total_gpu_hours: 17, average_duration_seconds: 4500, success_rate: 0,
      // Waited 30 s, 1800 s, and 60 s so far (pending).
      average_queue_seconds: 630,
      total_idle_gpu_hours: null, gpu_efficiency: null, utilization_coverage: 0, total_energy_kwh: null, energy_coverage: 0,
    });
    expect(res.body.data.grouped).to.deep.equal([
      { instance_type: 'p5.48xlarge', workload_count: 1, gpu_hours: 16, success_rate: 0, average_queue_seconds: 30, ...NO_USAGE },
      { instance_type: 'a3-highgpu-8g', workload_count: 1, gpu_hours: 1, success_rate: 0, average_queue_seconds: 1800, ...NO_USAGE },
      { instance_type: 'unknown', workload_count: 1, gpu_hours: 0, success_rate: 0, average_queue_seconds: 60, ...NO_USAGE },
    ]);
  });

  it('metrics returns all five metrics with null values while no samples exist', async () => {
    const res = await t.get(`/v1/workloads/${running.workloadId}/metrics`);
    expect(res.status).to.equal(200);
    expectShape(res.body, workloadMetricsEndpoint.response);
    const empty = { avg: null, min: null, max: null, current: null };
    expect(res.body.data).to.deep.equal({
      workload_id: running.workloadId,
      time_range: 'last_1h',
      metrics: { gpu_utilization: empty, memory_utilization: empty, temperature: empty, power_usage: empty, gpu_usage: empty },
    });
  });

  it('metrics returns only the asked metrics, for the asked range', async () => {
    const res = await t.get(`/v1/workloads/${finished.workloadId}/metrics?time_range=job_lifetime&metrics=power_usage,temperature`);
    expect(res.status).to.equal(200);
    expect(res.body.data.time_range).to.equal('job_lifetime');
    expect(Object.keys(res.body.data.metrics)).to.have.members(['power_usage', 'temperature']);
  });

  it('ranking by gpu_hours returns {total} entries, scope_average keyed by sort_by and total_count', async () => {
    const res = await t.get('/v1/workloads/metrics?sort_by=gpu_hours&limit=2');
    expect(res.status).to.equal(200);
    expectShape(res.body, rankingEndpoint.response);
    expect(res.body.data.workloads).to.deep.equal([
      { workload_id: finished.workloadId, name: 'llama-pretrain', initiative_id: 'llm', gpu_hours: { total: 16 } },
      { workload_id: running.workloadId, name: 'vit-finetune', initiative_id: 'vision', gpu_hours: { total: 1 } },
    ]);
    expect(res.body.data.scope_average).to.deep.equal({ gpu_hours: 5.6667 });
    expect(res.body.metadata).to.deep.equal({ total_count: 3 });
  });

  it('ranking by gpu_hours ascending puts the smallest first', async () => {
    const res = await t.get('/v1/workloads/metrics?sort_by=gpu_hours&order=asc&limit=1');
    expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal([pending.workloadId]);
  });

  it('ranking by a GPU metric is empty, with a null scope_average, while no samples exist', async () => {
    const res = await t.get('/v1/workloads/metrics');
    expect(res.status).to.equal(200);
    expectShape(res.body, rankingEndpoint.response);
    expect(res.body.data).to.deep.equal({ workloads: [], scope_average: { gpu_utilization: null } });
    expect(res.body.metadata).to.deep.equal({ total_count: 0 });
  });

  it('capacity without budgets reports allocated 0, used as measured and remaining = −used', async () => {
    const res = await t.get('/v1/capacity');
    expect(res.status).to.equal(200);
    expectShape(res.body, capacityEndpoint.response);
    expect(res.body.data).to.deep.equal({
      organization_id: 'acme',
      // No budget: no period end to project to and nothing to exhaust; the burn rate is what was used in the last 7 days.
      summary: {
        total_allocated_gpu_hours: 0,
        total_used_gpu_hours: 17,
        total_remaining_gpu_hours: -17,
        current_active_gpus: 2,
        burn_rate_gpu_hours_per_day: 2.4286,
        projected_used_gpu_hours_at_period_end: null,
        projected_exhaustion_at: null,
      },
      pools: [],
      initiatives: [],
    });
  });

  it('health answers without credentials', async () => {
    const res = await t.get('/v1/health', { as: null });
    expect(res.status).to.equal(200);
    expectShape(res.body, healthEndpoint.response);
    expect(res.body.data.status).to.equal('healthy');
    expect(res.body.data.version).to.match(/^\d+\.\d+\.\d+/);
    expect(res.body.data.timestamp).to.equal(new Date(t.clock.now()).toISOString());
    expect(res.body.data.checks).to.deep.equal([
      { name: 'index', status: 'ok' },
      { name: 'exporters', status: 'ok' }, // telemetry on, no exporter discovered: nothing failing
    ]);
  });
});
