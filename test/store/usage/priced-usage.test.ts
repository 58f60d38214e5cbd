// The priced usage read on the real backend: GPU-ms per span and kind, grouped as a statistic, a
// series or a ranking groups, with each workload's idle time and energy spread over its pods' time.
import { expect } from 'chai';
import { systemClock } from '../../../src/domain/clock.js';
import { emptyUsage } from '../../../src/domain/gpu-usage.js';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import type { PricedUsageRow } from '../../../src/query/ports.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { saveUsage } from '../../support/usage-seed.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { at, HOUR_MS, inOrg } from '../temp-store.js';

const START = at('2026-11-10T08:00:00Z');
const NOW = at('2026-11-20T00:00:00Z');

describe('store/priced-usage', () => {
  let t: TestIndex;
  let workloads: WorkloadRecord[];

  before(async () => {
    t = await openTestIndex({ clock: systemClock });
    // Two 2-GPU workloads of 4 hours: alice's on A100s, bob's on H100s a day later.
    const run = (submittedBy: string, gpuModel: string, startedAt: number) =>
      aWorkload({
        submittedBy, gpuModel, gpuCount: 2, submittedAt: startedAt - 60_000, startedAt,
        completedAt: startedAt + 4 * HOUR_MS, status: 'completed', exitCode: 0,
      });
    workloads = [run('alice', 'NVIDIA-A100', START), run('bob', 'NVIDIA-H100', START + 24 * HOUR_MS)];
    await t.seed.upsertWorkloads(workloads);
    await t.seed.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
    // alice's GPUs sat idle 2 of their 8 GPU-hours and drew 8 kWh (in 0.1 J).
    const usage = { ...emptyUsage(), utilSeconds: 8 * 3600, idleSeconds: 2 * 3600, powerSeconds: 8 * 3600, energyDj: 8 * 36_000_000 };
    await saveUsage(t.location, (workloads[0] as WorkloadRecord).workloadId, usage, START + HOUR_MS);
  });
  after(() => t.close());

  const sum = (rows: readonly PricedUsageRow[], pick: (row: PricedUsageRow) => number) => rows.reduce((total, row) => total + pick(row), 0);

  it('cuts each workload\'s pods at the spans, per kind and submitter, and spreads idle time and energy in proportion', async () => {
    // A rate change one hour into alice's run: a quarter of her GPU-time falls before it.
    const spans = [{ from: START - HOUR_MS, to: START + HOUR_MS }, { from: START + HOUR_MS, to: NOW }];
    const rows = await t.index.pricedUsage(inOrg(), spans, { groupBy: 'submitted_by', usage: { now: NOW } });
    const alice = rows.filter((row) => row.key === 'alice').sort((a, b) => a.span - b.span);
    expect(alice.map((row) => [row.span, row.gpuModel, row.gpuMs / HOUR_MS])).to.deep.equal([[0, 'NVIDIA-A100', 2], [1, 'NVIDIA-A100', 6]]);
    expect(alice.map((row) => (row.idleGpuMs ?? 0) / HOUR_MS)).to.deep.equal([0.5, 1.5]);
    expect(alice.map((row) => (row.energyDj ?? 0) / 36_000_000)).to.deep.equal([2, 6]);
    const bob = rows.filter((row) => row.key === 'bob');
    expect(bob.map((row) => [row.span, row.gpuModel, row.gpuMs / HOUR_MS, row.idleGpuMs])).to.deep.equal([[1, 'NVIDIA-H100', 8, 0]]);
  });

  it('groups by the day of submission and by workload, and reads nothing of a scope without teams', async () => {
    const spans = [{ from: START - HOUR_MS, to: NOW }];
    const byDay = await t.index.pricedUsage(inOrg(), spans, { interval: 'day' });
    expect(byDay.map((row) => [new Date(row.submittedIn ?? 0).toISOString(), row.gpuMs / HOUR_MS]).sort()).to.deep.equal([
      ['2026-11-10T00:00:00.000Z', 8], ['2026-11-11T00:00:00.000Z', 8],
    ]);
    expect(byDay.every((row) => row.idleGpuMs === undefined && row.key === undefined)).to.equal(true);
    const byWorkload = await t.index.pricedUsage(inOrg(), spans, { groupBy: 'workload_id' });
    expect(byWorkload.map((row) => row.key).sort()).to.deep.equal(workloads.map((w) => w.workloadId).sort());
    expect(sum(byWorkload, (row) => row.gpuMs) / HOUR_MS).to.equal(16);
    const noTeams = { ...inOrg(), scope: { ...inOrg().scope, initiatives: [] } };
    expect(await t.index.pricedUsage(noTeams, spans, { groupBy: 'workload_id' })).to.deep.equal([]);
  });
});
