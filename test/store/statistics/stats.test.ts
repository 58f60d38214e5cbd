import { expect } from 'chai';
import { emptyUsage, usageFigures } from '../../../src/domain/gpu-usage.js';
import { systemClock } from '../../../src/domain/clock.js';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import type { SqlWorkloadIndex } from '../../../src/store/reads/workload-index.js';
import { sqliteIndex } from '../../../src/store/sqlite/connection-ports.js';
import { sqliteOnly } from '../../support/backend.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { RecordingStatements } from '../recording-statements.js';
import { at, HOUR_MS, inOrg, ORG, openTempStore, type TempStore } from '../temp-store.js';

const NO_USAGE = usageFigures(emptyUsage(), 0);

const NOW = at('2026-11-10T14:00:00Z');
const T0 = at('2026-11-10T10:00:00Z');

/** A workload that ran `hours` from T0 on `gpus` GPUs (still running when status is running). */
function ran(hours: number, overrides: Partial<WorkloadRecord> = {}): WorkloadRecord {
  const running = overrides.status === 'running';
  return aWorkload({
    gpuCount: 1,
    submittedAt: T0 - 60_000,
    startedAt: T0,
    completedAt: running ? null : T0 + hours * HOUR_MS,
    exitCode: running ? null : 0,
    ...overrides,
  });
}

describe('store/stats-queries', () => {
  let t: TestIndex;
  beforeEach(async () => {
    t = await openTestIndex({ clock: systemClock });
  });
  afterEach(() => t.close());

  async function load(records: WorkloadRecord[]): Promise<void> {
    await t.seed.upsertWorkloads(records);
    await t.seed.upsertPodIntervals(records.filter((r) => r.startedAt !== null).map((r) => aPodInterval(r)));
  }

  describe('stats', () => {
    it('sums workloads, GPU-hours, average duration and success rate', async () => {
      await load([
        ran(1, { gpuCount: 2, status: 'completed' }), // 2 GPU-h, 3600 s
        ran(2, { gpuCount: 1, status: 'failed', exitCode: 1 }), // 2 GPU-h, 7200 s
        ran(3, { gpuCount: 4, status: 'completed' }), // 12 GPU-h, 10800 s
        ran(0, { status: 'cancelled', startedAt: null, completedAt: T0 }), // never started
        ran(0, { status: 'pending', startedAt: null, completedAt: null, exitCode: null }),
      ]);
      const { summary, groups } = await t.index.stats(inOrg(), null, NOW);
      expect(summary.workloadCount).to.equal(5);
      expect(summary.gpuHours).to.be.closeTo(16, 1e-9);
      expect(summary.averageDurationSeconds).to.equal(7200); // unstarted rows are left out
      expect(summary.successRate).to.be.closeTo(2 / 3, 1e-12);
      expect(groups).to.deep.equal([]);
    });

    it('counts running workloads up to now', async () => {
      await load([ran(0, { gpuCount: 8, status: 'running' })]); // started 4 h before NOW
      const { summary } = await t.index.stats(inOrg(), null, NOW);
      expect(summary.gpuHours).to.be.closeTo(32, 1e-9);
      expect(summary.averageDurationSeconds).to.equal(4 * 3600);
    });

    it('gives success rate 0 when nothing completed or failed, and 1 when all completed', async () => {
      await load([ran(1, { status: 'cancelled' }), ran(0, { status: 'running' })]);
      expect((await t.index.stats(inOrg(), null, NOW)).summary.successRate).to.equal(0);
      await load([ran(1, { status: 'completed' })]);
      expect((await t.index.stats(inOrg(), null, NOW)).summary.successRate).to.equal(1);
    });

    it('gives zeros for no workloads', async () => {
      expect(await t.index.stats(inOrg(), 'submitted_by', NOW)).to.deep.equal({
        summary: { workloadCount: 0, gpuHours: 0, averageDurationSeconds: 0, successRate: 0, averageQueueSeconds: 0, ...NO_USAGE },
        groups: [],
      });
    });

    it('gives average duration 0 when no workload started', async () => {
      await load([ran(0, { status: 'pending', startedAt: null, completedAt: null, exitCode: null })]);
      expect((await t.index.stats(inOrg(), null, NOW)).summary.averageDurationSeconds).to.equal(0);
    });

    it('groups by submitted_by, initiative_id and instance_type, by GPU-hours descending then key', async () => {
      await load([
        ran(1, { submittedBy: 'alice', initiativeId: 'llm', instanceType: 'p5' }),
        ran(3, { submittedBy: 'bob', initiativeId: 'llm', instanceType: 'a3', status: 'failed', exitCode: 2 }),
        ran(2, { submittedBy: 'carol', initiativeId: 'vision', instanceType: 'p5' }),
        ran(2, { submittedBy: 'alice', initiativeId: 'audio', instanceType: 'a3' }),
      ]);
      const groups = async (key: 'submitted_by' | 'initiative_id' | 'instance_type') =>
        (await t.index.stats(inOrg(), key, NOW)).groups.map((g) => [g.key, g.workloadCount, g.gpuHours, g.successRate]);

      expect(await groups('submitted_by')).to.deep.equal([['alice', 2, 3, 1], ['bob', 1, 3, 0], ['carol', 1, 2, 1]]);
      expect(await groups('initiative_id')).to.deep.equal([['llm', 2, 4, 0.5], ['audio', 1, 2, 1], ['vision', 1, 2, 1]]);
      expect(await groups('instance_type')).to.deep.equal([['a3', 2, 5, 0.5], ['p5', 2, 3, 1]]);
      const alice = (await t.index.stats(inOrg(), 'submitted_by', NOW)).groups[0];
      expect(alice?.averageDurationSeconds).to.equal(1.5 * 3600);
    });

    it('gives the same summary whether or not the groups are asked', async () => {
      await load([
        ran(1, { submittedBy: 'alice', gpuCount: 3 }),
        ran(2, { submittedBy: 'bob', status: 'failed', exitCode: 1 }),
        ran(0, { submittedBy: 'bob', status: 'running' }),
        ran(0, { submittedBy: 'carol', status: 'pending', startedAt: null, completedAt: null, exitCode: null }),
      ]);
      const plain = (await t.index.stats(inOrg(), null, NOW)).summary;
      for (const key of ['submitted_by', 'initiative_id', 'instance_type'] as const) {
        const grouped = (await t.index.stats(inOrg(), key, NOW)).summary;
        expect(grouped.workloadCount).to.equal(plain.workloadCount);
        expect(grouped.gpuHours).to.be.closeTo(plain.gpuHours, 1e-9);
        expect(grouped.averageDurationSeconds).to.be.closeTo(plain.averageDurationSeconds, 1e-9);
        expect(grouped.successRate).to.equal(plain.successRate);
      }
    });

    it('keeps to the filter: submitted range, initiative and scope', async () => {
      await load([
        ran(1, { initiativeId: 'llm', submittedAt: at('2026-11-01T00:00:00Z') }),
        ran(2, { initiativeId: 'vision', submittedAt: at('2026-11-05T00:00:00Z') }),
        ran(4, { initiativeId: 'llm', submittedAt: at('2026-11-09T00:00:00Z') }),
        ran(8, { organizationId: 'globex' }),
      ]);
      const inRange = await t.index.stats(inOrg({ submittedFrom: at('2026-11-05T00:00:00Z') }), null, NOW);
      expect(inRange.summary.gpuHours).to.be.closeTo(6, 1e-9);
      expect((await t.index.stats(inOrg({ initiativeId: 'llm' }), null, NOW)).summary.gpuHours).to.be.closeTo(5, 1e-9);
      const team = await t.index.stats({ scope: { organizationId: ORG, initiatives: ['vision'] } }, 'initiative_id', NOW);
      expect(team.groups.map((g) => g.key)).to.deep.equal(['vision']);
      const nobody = await t.index.stats({ scope: { organizationId: ORG, initiatives: [] } }, null, NOW);
      expect(nobody.summary.workloadCount).to.equal(0);
    });
  });

  describe('rankByGpuHours', () => {
    let small: WorkloadRecord, large: WorkloadRecord, tieA: WorkloadRecord, tieB: WorkloadRecord, live: WorkloadRecord;

    beforeEach(async () => {
      small = ran(1, { workloadId: 'w-small', name: 'small' });
      large = ran(10, { workloadId: 'w-large', name: 'large', initiativeId: 'vision' });
      tieB = ran(3, { workloadId: 'w-tie-b' });
      tieA = ran(3, { workloadId: 'w-tie-a' });
      live = ran(0, { workloadId: 'w-live', status: 'running', gpuCount: 2 }); // 8 GPU-h at NOW
      await load([small, large, tieB, tieA, live]);
    });

    it('ranks by GPU-hours descending with ties on workload_id, and reports count and average', async () => {
      const ranking = await t.index.rankByGpuHours(inOrg(), { order: 'desc', limit: 10, now: NOW });
      expect(ranking.entries.map((e) => e.workloadId)).to.deep.equal(['w-large', 'w-live', 'w-tie-a', 'w-tie-b', 'w-small']);
      expect(ranking.entries[0]).to.deep.equal({ workloadId: 'w-large', name: 'large', initiativeId: 'vision', gpuHours: 10 });
      expect(ranking.totalCount).to.equal(5);
      expect(ranking.average).to.be.closeTo((1 + 10 + 3 + 3 + 8) / 5, 1e-9);
    });

    it('ranks ascending and honours the limit', async () => {
      const ranking = await t.index.rankByGpuHours(inOrg(), { order: 'asc', limit: 3, now: NOW });
      expect(ranking.entries.map((e) => e.workloadId)).to.deep.equal(['w-small', 'w-tie-a', 'w-tie-b']);
      expect(ranking.totalCount).to.equal(5);
    });

    it('reads running workloads at now', async () => {
      const later = await t.index.rankByGpuHours(inOrg(), { order: 'desc', limit: 1, now: NOW + 2 * HOUR_MS });
      expect(later.entries[0]?.workloadId).to.equal('w-live'); // 12 GPU-h
    });

    it('applies filter and scope, with average null when nothing matches', async () => {
      const vision = await t.index.rankByGpuHours(inOrg({ initiativeId: 'vision' }), { order: 'desc', limit: 10, now: NOW });
      expect(vision.entries.map((e) => e.workloadId)).to.deep.equal(['w-large']);
      const running = await t.index.rankByGpuHours(inOrg({ status: 'running' }), { order: 'desc', limit: 10, now: NOW });
      expect(running.totalCount).to.equal(1);
      const none = await t.index.rankByGpuHours({ scope: { organizationId: ORG, initiatives: [] } }, { order: 'desc', limit: 10, now: NOW });
      expect(none).to.deep.equal({ entries: [], totalCount: 0, average: null });
    });
  });

  sqliteOnly.describe('the statistics\' and ranking\'s SQLite query plans', () => {
    let lite: TempStore;
    beforeEach(() => {
      lite = openTempStore();
    });
    afterEach(() => lite.close());

    const filter = inOrg({ submittedFrom: NOW - 30 * 24 * HOUR_MS, submittedBefore: NOW });
    const params = { org: ORG, from: 0, before: 0, now: NOW, limit: 10, firstDay: 0, lastDay: 0, initiative: 'llm', status: 'completed' };
    const statementsOf = async (groupBy: 'submitted_by' | 'initiative_id' | 'instance_type' | null) => {
      const statements = new RecordingStatements(lite.db);
      await sqliteIndex(lite.db, statements).stats(filter, groupBy, NOW);
      return statements.texts.join('\n');
    };
    const plansOf = async (run: (index: SqlWorkloadIndex) => Promise<unknown>) => {
      const statements = new RecordingStatements(lite.db);
      await run(sqliteIndex(lite.db, statements));
      return statements.plans(params).map((plan) => plan.join('\n'));
    };

    it('reads statistics from a daily rollup, the partial days and the rows below 0 from indexes', async () => {
      for (const groupBy of [null, 'submitted_by', 'initiative_id', 'instance_type'] as const) {
        const [plan] = await plansOf((index) => index.stats(filter, groupBy, NOW));
        const table = { submitted_by: 'stats_daily_submitter', instance_type: 'stats_daily_instance_type', initiative_id: 'stats_daily_initiative', none: 'stats_daily_initiative' }[groupBy ?? 'none'];
        expect(plan, String(groupBy)).to.include('SEARCH r USING PRIMARY KEY (organization_id=? AND day>? AND day<?)');
        expect(await statementsOf(groupBy)).to.include(`FROM ${table} r`);
        // By submitter, whole weeks from the weekly rollup (schema v11).
        if (groupBy === 'submitted_by') expect(await statementsOf(groupBy)).to.include('FROM stats_weekly_submitter r').and.include('FROM stats_weekly_usage_submitter r');
        // The two partial days, and the rows still waiting that were submitted after now.
        expect(plan?.match(/COVERING INDEX workloads_org_submitted \(organization_id=\? AND submitted_at>\? AND submitted_at<\?\)/g), String(groupBy)).to.have.lengthOf(3);
        expect(plan, String(groupBy)).to.include('COVERING INDEX workloads_unfinished_horizon (organization_id=? AND <expr>>?)');
        expect(plan, String(groupBy)).not.to.match(/\bSCAN (w|r)\b/);
      }
    });

    it('keeps filters the rollups lack on the list index', async () => {
      const [plan] = await plansOf((index) => index.stats({ ...filter, status: 'failed' }, 'initiative_id', NOW));
      expect(plan).to.include('COVERING INDEX workloads_org_submitted');
      expect(plan).not.to.include('stats_daily');
    });

    it('ranks from the finished rows\' GPU-hours index and the unfinished rows\' index, and reads only the winners from the table', async ()  => {
      await lite.store.upsertWorkloads([ran(1), ran(0, { status: 'running' })]);
      const [pairs, finished, unfinished, overall, winners] = await plansOf((index) => index.rankByGpuHours(inOrg(), { order: 'desc', limit: 10, now: NOW }));
      expect(pairs).to.include('SEARCH t USING PRIMARY KEY (organization_id=?)');
      expect(finished).to.include('USING INDEX workloads_finished_gpu_hours (organization_id=? AND initiative_id=? AND status=?)');
      expect(unfinished).to.include('COVERING INDEX workloads_unfinished_horizon (organization_id=?)');
      expect(overall).to.include('SEARCH t USING PRIMARY KEY (organization_id=?)');
      expect(overall).to.include('COVERING INDEX workloads_unfinished_horizon (organization_id=? AND <expr>>?)');
      expect(winners).to.match(/SEARCH w USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    });
  });
});

