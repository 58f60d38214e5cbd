// The usage figures through the real service, on data whose answer is known: usage saved as the
// telemetry flow saves it (SQLite's lifetime store, PostgreSQL's bucket writer: the code that
// test/telemetry/sinks/usage-tally.test.ts and gpu-telemetry.test.ts feed from exporters with set values),
// then read back by GET /v1/workloads/{id}, the statistics, their series and the rankings.
import { expect } from 'chai';
import { emptyUsage, type GpuUsage } from '../../src/domain/gpu-usage.js';
import { testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { NO_USAGE } from '../support/no-usage.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { saveUsage } from '../support/usage-seed.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const id = (n: number) => `us000000-0000-4000-8000-00000000000${n}`;

// Each a 1-GPU workload that ran one hour on the 19th. Utilization in 0.01 %, power in 0.1 W, × s.
const IDLE = id(1); // 3 % and 300 W for the whole hour: every minute idle.
const BUSY = id(2); // 80 % and 400 W for half of it: the other half was never sampled.
const DARK = id(3); // no sample at all.
const usage: Record<string, GpuUsage> = {
  [IDLE]: { utilSeconds: 3600, utilWeighted: 300 * 3600, idleSeconds: 3600, powerSeconds: 3600, energyDj: 3000 * 3600, gpuErrors: 0 },
  [BUSY]: { utilSeconds: 1800, utilWeighted: 8000 * 1800, idleSeconds: 0, powerSeconds: 1800, energyDj: 4000 * 1800, gpuErrors: 0 },
};

/** Half of the usage, twice: a save adds to what is stored. */
function half(u: GpuUsage): GpuUsage {
  const h = emptyUsage();
  for (const key of Object.keys(u) as (keyof GpuUsage)[]) h[key] = u[key] / 2;
  return h;
}

describe('API GPU usage figures: idle GPU-hours, efficiency, energy', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let location: TestIndexLocation;
  let t: TestService;

  const run = (n: number, initiativeId: string) => {
    const submittedAt = at('2026-11-19T08:00:00Z') + n * 60_000;
    return aWorkload({ workloadId: id(n), gpuCount: 1, initiativeId, submittedAt, startedAt: submittedAt, completedAt: submittedAt + HOUR, status: 'completed', exitCode: 0 });
  };
  const workloads = [run(1, 'llm'), run(2, 'vision'), run(3, 'llm')];

  before(async () => {
    temp = makeTempDir();
    location = await testIndexLocation(temp.path);
    t = await startTestService({ now: '2026-11-20T12:00:00Z', index: location });
    // The first half of IDLE's usage comes before its row exists, as samples can: it counts once the row is written.
    await saveUsage(location, IDLE, half(usage[IDLE] as GpuUsage), at('2026-11-19T08:30:00Z'));
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
    await saveUsage(location, IDLE, half(usage[IDLE] as GpuUsage), at('2026-11-19T09:00:00Z'));
    await saveUsage(location, BUSY, usage[BUSY] as GpuUsage, at('2026-11-19T09:00:00Z'));
  });
  after(async () => {
    await t.stop();
    await location.remove();
    temp.remove();
  });

  const data = async (path: string, as = t.callers.admin) => {
    const res = await t.get(path, { as });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as JsonBody;
  };
  const figures = (body: JsonBody) => ({
    idle_gpu_hours: body.idle_gpu_hours, gpu_efficiency: body.gpu_efficiency, utilization_coverage: body.utilization_coverage,
    energy_kwh: body.energy_kwh, energy_coverage: body.energy_coverage,
  });

  it('gives each workload its idle GPU-hours, efficiency and energy, with their coverage; null where nothing was sampled', async () => {
    expect(figures(await data(`/v1/workloads/${IDLE}`))).to.deep.equal({ idle_gpu_hours: 1, gpu_efficiency: 0.03, utilization_coverage: 1, energy_kwh: 0.3, energy_coverage: 1 });
    expect(figures(await data(`/v1/workloads/${BUSY}`))).to.deep.equal({ idle_gpu_hours: 0, gpu_efficiency: 0.8, utilization_coverage: 0.5, energy_kwh: 0.2, energy_coverage: 0.5 });
    expect(figures(await data(`/v1/workloads/${DARK}`))).to.deep.equal(NO_USAGE);
  });

  it('totals them in the summary and each group, efficiency weighted by sampled GPU-time', async () => {
    const stats = await data('/v1/workloads/stats?time_range=last_7_days&group_by=initiative_id');
    // (300 × 3600 + 8000 × 1800) / (5400 × 10,000) = 0.28667; 5400 s sampled of 3 GPU-hours.
    expect(stats.summary).to.deep.include({ total_idle_gpu_hours: 1, gpu_efficiency: 0.2867, utilization_coverage: 0.5, total_energy_kwh: 0.5, energy_coverage: 0.5 });
    expect(stats.grouped.map((g: JsonBody) => ({ initiative_id: g.initiative_id, ...figures(g) }))).to.deep.equal([
      { initiative_id: 'llm', idle_gpu_hours: 1, gpu_efficiency: 0.03, utilization_coverage: 0.5, energy_kwh: 0.3, energy_coverage: 0.5 },
      { initiative_id: 'vision', idle_gpu_hours: 0, gpu_efficiency: 0.8, utilization_coverage: 0.5, energy_kwh: 0.2, energy_coverage: 0.5 },
    ]);
  });

  it('gives the same totals over the rows of a partial day and in a series', async () => {
    const window = 'time_range=custom&start_date=2026-11-19T08:00:30Z&end_date=2026-11-19T08:05:00Z';
    const partial = await data(`/v1/workloads/stats?${window}`);
    expect(partial.summary).to.deep.include({ total_idle_gpu_hours: 1, total_energy_kwh: 0.5 });
    const { series } = await data('/v1/workloads/stats?time_range=last_7_days&interval=day');
    expect(series.filter((e: JsonBody) => e.workload_count > 0)).to.deep.equal([
      { start: '2026-11-19T00:00:00.000Z', workload_count: 3, gpu_hours: 3, success_rate: 1, average_queue_seconds: 0, idle_gpu_hours: 1, gpu_efficiency: 0.2867, utilization_coverage: 0.5, energy_kwh: 0.5, energy_coverage: 0.5 },
    ]);
  });

  it('moves a workload\'s usage with its keys: a failure reason set later takes it to that group', async () => {
    await t.service.store.upsertWorkloads([{ ...(workloads[0] as (typeof workloads)[number]), status: 'failed', exitCode: 137, failureReason: 'oom_killed' }]);
    const stats = await data('/v1/workloads/stats?time_range=last_7_days&group_by=failure_reason');
    expect(stats.grouped.map((g: JsonBody) => [g.failure_reason, g.idle_gpu_hours, g.energy_kwh])).to.deep.equal([
      [null, 0, 0.2],
      ['oom_killed', 1, 0.3],
    ]);
    await t.service.store.upsertWorkloads([workloads[0] as (typeof workloads)[number]]);
  });

  it('ranks by idle GPU-hours and by efficiency, leaving out workloads without samples', async () => {
    const idle = await data('/v1/workloads/metrics?sort_by=idle_gpu_hours&order=desc');
    expect(idle.workloads.map((w: JsonBody) => [w.workload_id, w.idle_gpu_hours])).to.deep.equal([
      [IDLE, { total: 1, coverage: 1 }],
      [BUSY, { total: 0, coverage: 0.5 }],
    ]);
    expect(idle.scope_average).to.deep.equal({ idle_gpu_hours: 0.5 });
    const efficiency = await data('/v1/workloads/metrics?sort_by=gpu_efficiency&order=asc&limit=1');
    expect(efficiency.workloads.map((w: JsonBody) => [w.workload_id, w.gpu_efficiency])).to.deep.equal([[IDLE, { value: 0.03, coverage: 1 }]]);
    expect(efficiency.scope_average).to.deep.equal({ gpu_efficiency: 0.2867 });
  });

  it('shows a MEMBER only its team\'s usage', async () => {
    const stats = await data('/v1/workloads/stats?time_range=last_7_days', t.callers.member);
    expect(stats.summary).to.deep.include({ total_idle_gpu_hours: 0, gpu_efficiency: 0.8, total_energy_kwh: 0.2 });
    const ranked = await data('/v1/workloads/metrics?sort_by=idle_gpu_hours', t.callers.member);
    expect(ranked.workloads.map((w: JsonBody) => w.workload_id)).to.deep.equal([BUSY]);
    const res = await t.get(`/v1/workloads/${IDLE}`, { as: t.callers.member });
    expect(res.status).to.equal(404);
  });
});
