// The fleet's history through the real service on the simulated API, its buckets one second: GPU
// nodes whose pods start and end while the service watches give GPU-hours over the range whose
// summary, groups and series add up, and whose allocated GPU-hours are the workloads' GPU-hours
// on those nodes (to the moment the service saw each pod start and end).
import { expect } from 'chai';
import sinon from 'sinon';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { noBudgets } from '../../src/query/empty-sources.js';
import { nodeFrom, podOn } from '../support/fleet-fixtures.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aNamespace, finished, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const NAMESPACE = 'ml';
const BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 1000,
  pools: [
    { poolId: 'h100', name: 'H100', allocatedGpuHours: 1000, instanceTypes: ['p5.48xlarge'] },
    // 4 A10G GPUs give at most 31 × 24 × 4 = 2,976 GPU-hours in a month.
    { poolId: 'a10g', name: 'A10G', allocatedGpuHours: 5000, instanceTypes: ['g5.12xlarge'] },
  ],
  initiatives: [],
};
const HOURS_FIELDS = ['capacity_gpu_hours', 'unavailable_gpu_hours', 'allocated_gpu_hours', 'idle_gpu_hours', 'unallocated_gpu_hours'] as const;

type Hours = Record<(typeof HOURS_FIELDS)[number], number> & { allocation_rate: number | null; utilization_rate: number | null };

const sum = (entries: readonly Hours[], field: (typeof HOURS_FIELDS)[number]) => entries.reduce((total, entry) => total + entry[field], 0);

describe('the fleet\'s history, on the simulated API (GET /v1/fleet over a range)', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  let ran: { node: string; gpus: number; startedAt: number; finishedAt: number }[];

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    sim.api.store.create('namespaces', aNamespace(NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' }));
    sim.api.store.create('nodes', nodeFrom('node-whole-h100.json', 'gpu-a', 'p5.48xlarge'));
    sim.api.store.create('nodes', nodeFrom('node-whole-h100.json', 'gpu-c', 'p5.48xlarge', { ready: 'False' }));
    sim.api.store.create('nodes', nodeFrom('node-time-slicing-a10g.json', 'gpu-b', 'g5.12xlarge'));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_CLUSTER_ID: 'gpu-east',
        GPUCAP_CLUSTER_ORGANIZATION_ID: 'acme', GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
        GPUCAP_FLEET_HISTORY_RESOLUTION_SECONDS: '1', GPUCAP_FLEET_HISTORY_FLUSH_SECONDS: '1',
      },
    });
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.summary?.capacity_gpu_hours > 0 ? true : undefined), {
      what: 'the first seconds of the fleet in its history', timeoutMs: 15_000,
    });
    // Pods that start and end while the service watches: 4 GPUs of gpu-a, 2 of 4 replicas of gpu-b.
    const startedAt = Date.now();
    sim.api.store.create('pods', podOn(NAMESPACE, 'train', 'gpu-a', { 'nvidia.com/gpu': '4' }, running(startedAt)));
    sim.api.store.create('pods', podOn(NAMESPACE, 'sliced', 'gpu-b', { 'nvidia.com/gpu': '2' }, running(startedAt)));
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.now?.allocated_gpus === 4.5 ? true : undefined), {
      what: 'the pods\' GPUs allocated', timeoutMs: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const finishedAt = Date.now();
    for (const name of ['train', 'sliced']) sim.api.store.patchStatus('pods', { namespace: NAMESPACE, name }, finished(startedAt, finishedAt, 0));
    ran = [{ node: 'gpu-a', gpus: 4, startedAt, finishedAt }, { node: 'gpu-b', gpus: 0.5, startedAt, finishedAt }];
    await waitFor(async () => ((await t.get('/v1/fleet')).body.data?.now?.allocated_gpus === 0 ? true : undefined), {
      what: 'the pods\' GPUs free again', timeoutMs: 10_000,
    });
    // The history runs a bucket and a flush behind.
    await new Promise((resolve) => setTimeout(resolve, 3000));
  });

  after(async () => {
    sinon.restore();
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  it('adds up: Σ groups = summary, Σ series = summary, unallocated = capacity − unavailable − allocated', async () => {
    for (const groupBy of ['node', 'gpu_model', 'pool_id', 'cluster_id']) {
      const res = await t.get(`/v1/fleet?time_range=today&interval=hour&group_by=${groupBy}`);
      expect(res.status).to.equal(200);
      const { summary, grouped, series } = res.body.data as { summary: Hours; grouped: Hours[]; series: (Hours & { grouped: Hours[] })[] };
      for (const field of HOURS_FIELDS) {
        expect(sum(grouped, field), `${groupBy} ${field}`).to.be.closeTo(summary[field], 0.0005);
        expect(sum(series, field), `${groupBy} series ${field}`).to.be.closeTo(summary[field], 0.0005);
        for (const entry of series) expect(sum(entry.grouped ?? [], field)).to.be.closeTo(entry[field], 0.0005);
      }
      expect(summary.unallocated_gpu_hours).to.be.closeTo(
        summary.capacity_gpu_hours - summary.unavailable_gpu_hours - summary.allocated_gpu_hours, 0.0002);
      // Each figure is rounded to 4 decimals, so after a few seconds' history the ratio of the rounded
      // figures can be off by more than any fixed tolerance: bound it by that rounding instead.
      const half = 0.00005;
      const inService = summary.capacity_gpu_hours - summary.unavailable_gpu_hours;
      const lowest = (summary.allocated_gpu_hours - half) / (inService + 2 * half);
      const highest = (summary.allocated_gpu_hours + half) / (inService - 2 * half);
      expect(summary.allocation_rate, groupBy).to.be.within(lowest - half, highest + half);
    }
  });

  it('keeps each node\'s GPUs in its state: the not ready node all unavailable, the others in service', async () => {
    const grouped = (await t.get('/v1/fleet?time_range=today&group_by=node')).body.data.grouped as (Hours & { key: string })[];
    const of = (key: string) => grouped.find((group) => group.key === key);
    const notReady = of('gpu-east/gpu-c');
    expect(notReady?.capacity_gpu_hours).to.be.greaterThan(0);
    expect(notReady?.unavailable_gpu_hours).to.equal(notReady?.capacity_gpu_hours);
    expect(of('gpu-east/gpu-a')?.unavailable_gpu_hours).to.equal(0);
    // gpu-a has 8 GPUs and gpu-b 4 (physical, whatever the replicas): their capacity keeps that ratio.
    expect((of('gpu-east/gpu-a')?.capacity_gpu_hours ?? 0) / (of('gpu-east/gpu-b')?.capacity_gpu_hours ?? 1)).to.be.closeTo(2, 0.01);
  });

  it('counts as allocated the workloads\' GPU-hours on those nodes, to the moment the service saw each pod', async () => {
    const grouped = (await t.get('/v1/fleet?time_range=today&group_by=node')).body.data.grouped as (Hours & { key: string })[];
    const stats = (await t.get('/v1/workloads/stats?time_range=today')).body.data.summary;
    const workloadHours = ran.reduce((total, pod) => total + (pod.gpus * (pod.finishedAt - pod.startedAt)) / 3_600_000, 0);
    expect(stats.total_gpu_hours).to.be.closeTo(workloadHours, 0.0001);
    // The service sees a pod start and end within a fraction of a second (the simulated API's watch).
    const seen = 0.5 / 3600;
    for (const pod of ran) {
      const node = grouped.find((group) => group.key === `gpu-east/${pod.node}`);
      expect(node?.allocated_gpu_hours, pod.node).to.be.closeTo((pod.gpus * (pod.finishedAt - pod.startedAt)) / 3_600_000, pod.gpus * seen);
    }
    const summary = (await t.get('/v1/fleet?time_range=today')).body.data.summary as Hours;
    expect(summary.allocated_gpu_hours).to.be.closeTo(stats.total_gpu_hours, 4.5 * seen);
  });

  it('sets each pool\'s budget against its hardware in the period, and marks the over-committed one', async () => {
    const now = new Date();
    const monthHours = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) / 3_600_000;
    for (const caller of [t.callers.admin, t.callers.member]) {
      const pools = (await t.get('/v1/capacity', { as: caller })).body.data.pools as Record<string, unknown>[];
      // Every H100 node counts, the not ready one too: 16 GPUs; the time-sliced A10G node its 4 physical ones.
      expect(pools.map((p) => [p.pool_id, p.capacity_gpu_hours_in_period, p.over_committed])).to.deep.equal([
        ['h100', 16 * monthHours, false],
        ['a10g', 4 * monthHours, true],
      ]);
    }
  });

  it('answers a MEMBER 403, and refuses a series longer than its limit', async () => {
    const member = await t.get('/v1/fleet?time_range=today', { as: t.callers.member });
    expect([member.status, member.body.error.code]).to.deep.equal([403, 'FORBIDDEN']);
    const long = await t.get('/v1/fleet?time_range=custom&start_date=2026-01-01T00:00:00Z&end_date=2026-03-01T00:00:00Z&interval=hour');
    expect(long.status).to.equal(400);
    expect(long.body.error.details[0]).to.include({ field: 'interval' });
    expect(long.body.error.details[0].message).to.include('a series has at most 744');
  });
});
