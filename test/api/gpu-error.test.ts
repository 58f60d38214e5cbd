// failure_reason gpu_error through the real service: a failed workload on whose GPUs the exporters
// reported an XID error, whichever comes first, the failure or the error's save; kept when the object
// is written again with its Kubernetes reason; outranked by a cause outside the job.
import { expect } from 'chai';
import { emptyUsage, type GpuUsage } from '../../src/domain/gpu-usage.js';
import type { WorkloadRecord } from '../../src/domain/workload.js';
import { testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { saveUsage } from '../support/usage-seed.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const HOUR = 3_600_000;
const id = (n: number) => `xe000000-0000-4000-8000-00000000000${n}`;
const SUBMITTED = Date.parse('2026-11-19T08:00:00Z');
const oneXid: GpuUsage = { ...emptyUsage(), utilSeconds: 60, utilWeighted: 60 * 5000, gpuErrors: 1 };

describe('API failure reason gpu_error, from the exporters\' XID errors', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let location: TestIndexLocation;
  let t: TestService;

  const workload = (n: number, overrides: Partial<WorkloadRecord>) =>
    aWorkload({ workloadId: id(n), gpuCount: 1, submittedAt: SUBMITTED + n * 60_000, startedAt: SUBMITTED + n * 60_000, ...overrides });
  const failed = (n: number, failureReason: WorkloadRecord['failureReason'], status: 'failed' | 'cancelled' = 'failed') =>
    workload(n, { status, exitCode: 137, failureReason, completedAt: SUBMITTED + n * 60_000 + HOUR });
  const running = (n: number) => workload(n, { status: 'running', exitCode: null, failureReason: null, completedAt: null });

  const reasonOf = async (n: number) => {
    const res = await t.get(`/v1/workloads/${id(n)}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.failure_reason as string | null;
  };
  const groups = async () => {
    const res = await t.get('/v1/workloads/stats?time_range=last_7_days&group_by=failure_reason');
    expect(res.status).to.equal(200);
    return Object.fromEntries(res.body.data.grouped.map((g: JsonBody) => [String(g.failure_reason), g.workload_count]));
  };

  before(async () => {
    temp = makeTempDir();
    location = await testIndexLocation(temp.path);
    t = await startTestService({ now: '2026-11-20T12:00:00Z', index: location });
    const all = [failed(1, 'oom_killed'), running(2), failed(3, 'preempted', 'cancelled'), failed(4, 'nonzero_exit')];
    await t.service.store.upsertWorkloads(all);
    await t.service.store.upsertPodIntervals(all.map((w) => aPodInterval(w)));
  });
  after(async () => {
    await t.stop();
    await location.remove();
    temp.remove();
  });

  it('turns a failed workload into gpu_error when a save brings an XID error after its failure', async () => {
    expect(await reasonOf(1)).to.equal('oom_killed');
    await saveUsage(location, id(1), oneXid, Date.parse('2026-11-19T09:10:00Z'));
    expect(await reasonOf(1)).to.equal('gpu_error');
    expect(await groups()).to.include({ gpu_error: 1, nonzero_exit: 1, preempted: 1 });
  });

  it('gives gpu_error to a workload that fails after its GPUs reported an XID error, and keeps it when written again', async () => {
    await saveUsage(location, id(2), oneXid, Date.parse('2026-11-19T08:30:00Z'));
    expect(await reasonOf(2)).to.equal(null);
    await t.service.store.upsertWorkloads([failed(2, 'nonzero_exit')]);
    expect(await reasonOf(2)).to.equal('gpu_error');
    // A relist writes the object again with the reason its status shows.
    await t.service.store.upsertWorkloads([{ ...failed(2, 'nonzero_exit'), resourceVersion: '99' }]);
    expect(await reasonOf(2)).to.equal('gpu_error');
    expect(await groups()).to.include({ gpu_error: 2, nonzero_exit: 1, preempted: 1 });
  });

  it('leaves a cause outside the job first: a preempted workload stays preempted', async () => {
    await saveUsage(location, id(3), oneXid, Date.parse('2026-11-19T09:10:00Z'));
    expect(await reasonOf(3)).to.equal('preempted');
  });

  it('needs an error: usage without one leaves the reason alone', async () => {
    await saveUsage(location, id(4), { ...oneXid, gpuErrors: 0 }, Date.parse('2026-11-19T09:10:00Z'));
    expect(await reasonOf(4)).to.equal('nonzero_exit');
  });
});
