import { expect } from 'chai';
import { systemClock } from '../../../src/domain/clock.js';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import { POSTGRES, SQLITE } from '../../../src/store/sql/dialect.js';
import { usageOverallQuery } from '../../../src/store/rankings/usage-ranking.js';
import { rawGpuSecondsSql } from '../../../src/store/sql/workload-sql.js';
import { usageQueries } from '../../../src/store/usage/usage-queries.js';
import { sqliteIndex } from '../../../src/store/sqlite/connection-ports.js';
import { sqliteOnly } from '../../support/backend.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { RecordingStatements } from '../recording-statements.js';
import { at, HOUR_MS, inOrg, ORG, openTempStore, type TempStore } from '../temp-store.js';

const FROM = at('2026-11-01T00:00:00Z');
const TO = at('2026-12-01T00:00:00Z');
const h = (hours: number) => hours * HOUR_MS;

describe('store/usage-queries', () => {
  let t: TestIndex;
  beforeEach(async () => {
    t = await openTestIndex({ clock: systemClock });
  });
  afterEach(() => t.close());

  /** A workload with one pod of `gpus` GPUs from `start` to `end` (null: still running). */
  async function podRun(start: number, end: number | null, overrides: Partial<WorkloadRecord> = {}): Promise<WorkloadRecord> {
    const record = aWorkload({
      gpuCount: 1,
      submittedAt: start - 60_000,
      startedAt: start,
      completedAt: end,
      status: end === null ? 'running' : 'completed',
      exitCode: end === null ? null : 0,
      ...overrides,
    });
    await t.seed.upsertWorkloads([record]);
    await t.seed.upsertPodIntervals([aPodInterval(record)]);
    return record;
  }

  const usage = (window: { from: number | null; to: number } = { from: FROM, to: TO }, filter = inOrg()) =>
    t.index.usage(filter, window);

  it('counts a pod inside the window in full', async () => {
    await podRun(FROM + h(1), FROM + h(3), { gpuCount: 4 });
    expect((await usage()).total).to.be.closeTo(8, 1e-9);
  });

  it('clips a pod straddling the window start', async () => {
    await podRun(FROM - h(5), FROM + h(2), { gpuCount: 2 });
    expect((await usage()).total).to.be.closeTo(4, 1e-9);
  });

  it('clips a pod straddling the window end', async () => {
    await podRun(TO - h(1), TO + h(10), { gpuCount: 2 });
    expect((await usage()).total).to.be.closeTo(2, 1e-9);
  });

  it('counts a running pod up to the window end', async () => {
    await podRun(TO - h(3), null, { gpuCount: 8 });
    expect((await usage()).total).to.be.closeTo(24, 1e-9);
    expect((await usage({ from: FROM, to: TO - h(1) })).total).to.be.closeTo(16, 1e-9);
  });

  it('counts an open pod of a finished workload only up to the workload\'s completion', async () => {
    const record = await podRun(FROM + h(1), FROM + h(2), { gpuCount: 1 });
    await t.seed.upsertPodIntervals([aPodInterval(record, { finishedAt: null })]);
    expect((await usage()).total).to.be.closeTo(1, 1e-9);
  });

  it('leaves out pods that ended before the window or start at its end', async () => {
    await podRun(FROM - h(10), FROM);
    await podRun(TO, TO + h(1));
    await podRun(FROM - h(2), null, { status: 'pending', startedAt: null });
    const result = await usage();
    expect(result.total).to.equal(0);
    expect(result.byInitiative.size).to.equal(0);
  });

  it('counts everything before the end when the window has no start', async () => {
    await podRun(FROM - h(100), FROM - h(90), { gpuCount: 1 });
    await podRun(FROM + h(1), FROM + h(2), { gpuCount: 1 });
    await podRun(TO - h(1), null, { gpuCount: 1 });
    expect((await usage({ from: null, to: TO })).total).to.be.closeTo(12, 1e-9);
  });

  it('sums every pod of a multi-pod workload', async () => {
    const job = await podRun(FROM + h(1), FROM + h(3), { gpuCount: 2 });
    await t.seed.upsertPodIntervals([aPodInterval(job, { podUid: 'second', gpus: 2, startedAt: FROM - h(1), finishedAt: FROM + h(1) })]);
    expect((await usage()).total).to.be.closeTo(4 + 2, 1e-9);
  });

  it('breaks usage down by initiative and by instance type', async () => {
    await podRun(FROM + h(1), FROM + h(2), { initiativeId: 'llm', instanceType: 'p5', gpuCount: 1 });
    await podRun(FROM + h(1), FROM + h(3), { initiativeId: 'llm', instanceType: 'a3', gpuCount: 1 });
    await podRun(FROM + h(1), FROM + h(5), { initiativeId: 'vision', instanceType: 'a3', gpuCount: 1 });
    const result = await usage();
    expect(result.total).to.be.closeTo(7, 1e-9);
    expect(Object.fromEntries(result.byInitiative)).to.deep.equal({ llm: 3, vision: 4 });
    expect(Object.fromEntries(result.byInstanceType)).to.deep.equal({ p5: 1, a3: 6 });
  });

  it('keeps to the organization, the scope and the initiative filter', async () => {
    await podRun(FROM + h(1), FROM + h(2), { initiativeId: 'llm' });
    await podRun(FROM + h(1), FROM + h(3), { initiativeId: 'vision' });
    await podRun(FROM + h(1), FROM + h(9), { organizationId: 'globex' });
    expect((await usage()).total).to.be.closeTo(3, 1e-9);
    expect((await usage(undefined, { scope: { organizationId: ORG, initiatives: ['vision'] } })).total).to.be.closeTo(2, 1e-9);
    expect((await usage(undefined, inOrg({ initiativeId: 'llm' }))).total).to.be.closeTo(1, 1e-9);
    expect((await usage(undefined, { scope: { organizationId: ORG, initiatives: [] } })).total).to.equal(0);
  });

  it('gives the same usage since ever from the aggregates as from the clipped pods', async () => {
    // Pods of every shape around the ends: finished, running, open in a finished workload, retried.
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 60; i += 1) {
      const start = FROM + Math.floor(random() * h(24 * 40));
      const status = random() < 0.3 ? 'running' : 'completed';
      const end = status === 'running' ? null : start + Math.floor(random() * h(48));
      const record = await podRun(start, end, { initiativeId: `i${i % 3}`, instanceType: `t${i % 2}`, gpuCount: 1 + (i % 4) });
      if (random() < 0.4) {
        const retryStart = start + Math.floor(random() * h(10));
        const retryEnd = random() < 0.5 ? null : retryStart + Math.floor(random() * h(30));
        await t.seed.upsertPodIntervals([aPodInterval(record, { podUid: `${record.workloadId}-retry`, gpus: 1, startedAt: retryStart, finishedAt: retryEnd })]);
      }
    }
    for (const to of [FROM + h(24 * 10), FROM + h(24 * 20) + 1234, FROM + h(24 * 45), TO + h(24 * 30)]) {
      const sinceEver = await usage({ from: null, to });
      const clipped = await usage({ from: 0, to });
      expect(sinceEver.total, `to=${new Date(to).toISOString()}`).to.be.closeTo(clipped.total, 1e-6);
      for (const [initiative, hours] of clipped.byInitiative) expect(sinceEver.byInitiative.get(initiative) ?? 0).to.be.closeTo(hours, 1e-6);
      for (const [type, hours] of sinceEver.byInstanceType) expect(clipped.byInstanceType.get(type) ?? 0).to.be.closeTo(hours, 1e-6);
    }
  });

  describe('workloads whose aggregate reads below 0', () => {
    /** GPU-seconds of the workload straight from its aggregates, read at `now`, before any floor. */
    const rawAggregate = async (workloadId: string, now: number) => {
      const expression = rawGpuSecondsSql(t.backend === 'sqlite' ? SQLITE : POSTGRES, '?');
      return (await t.sql(`SELECT ${expression} AS seconds FROM workloads w WHERE w.workload_id = ?`, [now, workloadId]))[0]?.seconds;
    };
    /** 8 GPUs for 2 h on the day before, so that no pod of it reaches the reading times below. */
    const sixteenHours = async () => await podRun(at('2026-11-09T08:00:00Z'), at('2026-11-09T10:00:00Z'), { gpuCount: 8 });

    it('adds nothing for a workload at 0 whose aggregate rounds slightly below 0, as statistics do', async () => {
      // Pods of 3 and 4 GPUs started in this very millisecond: 7 × (T / 1000) - (3 × T / 1000 + 4 × T / 1000)
      // rounds to -1.9e-6 s instead of 0.
      const T = at('2026-11-10T10:01:00.068Z');
      const fresh = aWorkload({ status: 'running', startedAt: T, completedAt: null, exitCode: null, gpuCount: 7 });
      await t.seed.upsertWorkloads([fresh]);
      await t.seed.upsertPodIntervals([
        aPodInterval(fresh, { podUid: 'three', gpus: 3, finishedAt: null }),
        aPodInterval(fresh, { podUid: 'four', gpus: 4, finishedAt: null }),
      ]);
      await sixteenHours();
      // SQLite sums the pods' starts in seconds as doubles, which leaves this residue; PostgreSQL sums
      // whole GPU-ms and then divides (exactly 0 here). The figures below are the same on both.
      const aggregate = await rawAggregate(fresh.workloadId, T);
      if (t.backend === 'sqlite') expect(aggregate, 'the aggregate of the fresh workload').to.be.lessThan(0);
      else expect(aggregate, 'the aggregate of the fresh workload').to.equal(0);

      const sinceEver = await usage({ from: null, to: T });
      expect((await t.index.stats(inOrg(), null, T)).summary.gpuHours).to.equal(16);
      expect(sinceEver.total).to.equal(16);
      expect(Object.fromEntries(sinceEver.byInitiative)).to.deep.equal({ llm: 16 });
    });

    it('counts nothing for an open pod that started after its workload completed, and takes nothing off the others', async () => {
      // Read at the workload's completion, the open pod counts 4 GPUs × -1 h in the aggregate. Flooring
      // the aggregate before taking back what it counts past the window would turn that into +4 h.
      const late = aWorkload({ gpuCount: 4, startedAt: at('2026-11-10T10:00:00Z'), completedAt: at('2026-11-10T11:00:00Z') });
      await t.seed.upsertWorkloads([late]);
      await t.seed.upsertPodIntervals([aPodInterval(late, { startedAt: at('2026-11-10T12:00:00Z'), finishedAt: null })]);
      await sixteenHours();
      expect(await rawAggregate(late.workloadId, TO)).to.equal(-4 * 3600);

      for (const window of [{ from: null, to: TO }, { from: FROM, to: TO }, { from: null, to: at('2026-11-10T11:30:00Z') }]) {
        expect((await usage(window)).total, JSON.stringify(window)).to.equal(16);
      }
      expect((await t.index.get(late.workloadId, TO))?.gpuHoursUsed).to.equal(0);
    });
  });

  describe('activeGpus', () => {
    it('sums gpu_count of running workloads in the filter', async () => {
      await podRun(FROM, null, { gpuCount: 8, initiativeId: 'llm' });
      await podRun(FROM, null, { gpuCount: 4, initiativeId: 'vision' });
      await podRun(FROM, FROM + h(1), { gpuCount: 16 });
      await podRun(FROM, null, { gpuCount: 2, status: 'pending', startedAt: null });
      await podRun(FROM, null, { gpuCount: 32, organizationId: 'globex' });
      expect(await t.index.activeGpus(inOrg())).to.equal(12);
      expect(await t.index.activeGpus({ scope: { organizationId: ORG, initiatives: ['vision'] } })).to.equal(4);
      expect(await t.index.activeGpus(inOrg({ status: 'pending' }))).to.equal(0);
    });

    it('is 0 with no running workload', async () => {
      expect(await t.index.activeGpus(inOrg())).to.equal(0);
    });
  });

  sqliteOnly.describe('the usage\'s SQLite query plans', () => {
    let lite: TempStore;
    beforeEach(() => {
      lite = openTempStore();
    });
    afterEach(() => lite.close());

    for (const [name, window] of [['a bounded window', { from: FROM, to: TO }], ['since ever', { from: null, to: TO }]] as const) {
      it(`reads ${name} through indexes, the pods from the ones still running (no scan)`, () => {
        for (const query of usageQueries(SQLITE, { scope: { organizationId: ORG, initiatives: ['llm'] } }, { window })) {
          const plan = (lite.db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(query.params) as { detail: string }[]).map((r) => r.detail);
          expect(plan.filter((line) => /^SCAN (w|workloads|workload_pods)\b/.test(line)), plan.join('\n')).to.deep.equal([]);
          if (query.sql.includes('workload_pods')) {
            expect(plan.join('\n')).to.match(/COVERING INDEX workload_pods_finished \(finished_at>\?/);
            expect(plan.join('\n')).to.match(/COVERING INDEX workload_pods_finished \(finished_at=\?/);
          }
        }
      });
    }

    it('sums the usage rankings\' count and mean from the idle index alone (schema v9), for an organization or its teams', () => {
      for (const initiatives of [null, ['llm', 'vision']]) {
        const query = usageOverallQuery(SQLITE, { scope: { organizationId: ORG, initiatives } });
        const plan = (lite.db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(query.params) as { detail: string }[]).map((r) => r.detail);
        expect(plan.join('\n')).to.match(/COVERING INDEX workload_usage_idle/);
      }
    });

    it('sums the active GPUs from the partial index of running workloads alone', async () => {
      const statements = new RecordingStatements(lite.db);
      await sqliteIndex(lite.db, statements).activeGpus({ scope: { organizationId: ORG, initiatives: ['llm'] } });
      const [plan] = statements.plans({ org: ORG, scope: '["llm"]' });
      expect(plan?.join('\n')).to.include('COVERING INDEX workloads_running');
    });
  });
});
