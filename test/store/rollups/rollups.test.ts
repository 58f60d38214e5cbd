import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { emptyUsage, usageFigures } from '../../../src/domain/gpu-usage.js';
import { mulberry32 } from '../../../sim/random.js';
import type { Scope } from '../../../src/access/principal.js';
import { WORKLOAD_STATUSES } from '../../../src/domain/workload.js';
import type { StatsGroupKey, UsageBreakdown, WorkloadFilter } from '../../../src/query/ports.js';
import { openDatabase, type Database } from '../../../src/store/sqlite/database.js';
import { LATEST_VERSION, migrate, MIGRATIONS, schemaVersion } from '../../../src/store/sqlite/migrations/migrate.js';
import { ROLLUPS } from '../../../src/store/rollups/definitions.js';
import { SQLITE } from '../../../src/store/sql/dialect.js';
import { rawStatsQuery, rawTrendQuery, type StatsRow, type TrendRow } from '../../../src/store/statistics/stats-queries.js';
import { rollupStatsQuery } from '../../../src/store/statistics/stats-rollup.js';
import type { SqlWorkloadIndex } from '../../../src/store/reads/workload-index.js';
import type { SqlQuery } from '../../../src/store/sql/executor.js';
import { sqliteIndex, sqliteWriter } from '../../../src/store/sqlite/connection-ports.js';
import { listUnfinished } from '../../../src/store/sqlite/unfinished.js';
import type { WorkloadWriter } from '../../../src/store/writes/workload-writer.js';
import { StatementCache } from '../../../src/store/sqlite/statement-cache.js';
import { whereOf } from '../../../src/store/sql/workload-sql.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { copyRows, DAY_MS, history, INITIATIVES, ORGS, pick, recomputedRollups, rollupContents, rollupsBeforeV5, T0, write } from '../rollup-history.js';
import { HOUR_MS, tempDir } from '../temp-store.js';
import { usageState } from '../usage-contents.js';
import { sqliteOnly } from '../../support/backend.js';

const NO_USAGE = usageFigures(emptyUsage(), 0);

const GROUPS: (StatsGroupKey | null)[] = [null, 'submitted_by', 'initiative_id', 'instance_type', 'failure_reason'];

interface Store {
  db: Database;
  store: WorkloadWriter;
  index: SqlWorkloadIndex;
  statements: StatementCache;
}

/** The rows of one of the statistics builders' queries. */
function rowsOf<Row>(s: Store, query: SqlQuery): Row[] {
  return s.statements.get(query.sql).all(query.params) as Row[];
}

const rollupStatsRows = (s: Store, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number) =>
  rowsOf<StatsRow>(s, rollupStatsQuery(SQLITE, filter, { groupBy, now }));
const rawStatsRows = (s: Store, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number) =>
  rowsOf<StatsRow>(s, rawStatsQuery(SQLITE, filter, { groupBy, now }));
const rollupTrendRows = (s: Store, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: 'day' | 'week' }, now: number) =>
  rowsOf<TrendRow>(s, rollupStatsQuery(SQLITE, filter, { ...options, now }));
const rawTrendRows = (s: Store, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: 'day' | 'week' }, now: number) =>
  rowsOf<TrendRow>(s, rawTrendQuery(SQLITE, filter, { ...options, now }));

function usageObject(usage: UsageBreakdown): object {
  const sorted = (m: Map<string, number>) => Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
  return { total: usage.total, byInitiative: sorted(usage.byInitiative), byInstanceType: sorted(usage.byInstanceType) };
}

/**
 * Every aggregate read from the rollups against the same read over the rows, for `rounds` random
 * filters, times of reading and windows: equal to the last bit.
 */
async function expectRollupsMatchRows(s: Store, seed: number, rounds: number): Promise<void> {
  const random = mulberry32(seed);
  for (let round = 0; round < rounds; round += 1) {
    const now = random() < 0.15 ? T0 - Math.floor(random() * 3) * DAY_MS : T0 - 2 * DAY_MS + Math.floor(random() * 4 * DAY_MS);
    const scopes: Scope['initiatives'][] = [null, null, ['llm', 'vision'], ['audio', 'nobody'], ['infra']];
    const scope: Scope = { organizationId: pick(random, ORGS), initiatives: pick(random, scopes) };
    const initiativeId = random() < 0.25 ? pick(random, INITIATIVES) : undefined;
    const days = pick(random, [0, 1, 3, 7, 30]);
    const from = random() < 0.15 ? undefined : random() < 0.2 ? Math.floor(now / DAY_MS) * DAY_MS - days * DAY_MS : now - days * DAY_MS - Math.floor(random() * 5000);
    const before = random() < 0.15 ? undefined : random() < 0.6 ? now + 1 : (from ?? now) + Math.floor(random() * 4 * DAY_MS);
    const filter: WorkloadFilter = { scope, ...(initiativeId ? { initiativeId } : {}), submittedFrom: from, submittedBefore: before };
    const label = JSON.stringify({ round, now, filter });
    for (const groupBy of GROUPS) {
      expect(rollupStatsRows(s, filter, groupBy, now), `${label} ${groupBy}`).to.deep.equal(rawStatsRows(s, filter, groupBy, now));
      const interval = pick(random, ['day', 'week'] as const);
      expect(rollupTrendRows(s, filter, { groupBy, interval }, now), `${label} ${groupBy} by ${interval}`)
        .to.deep.equal(rawTrendRows(s, filter, { groupBy, interval }, now));
    }

    const status = random() < 0.3 ? pick(random, WORKLOAD_STATUSES) : undefined;
    const ranked: WorkloadFilter = { scope, ...(initiativeId ? { initiativeId } : {}), ...(status ? { status } : {}) };
    const options = { order: random() < 0.7 ? ('desc' as const) : ('asc' as const), limit: 1 + Math.floor(random() * 15), now };
    expect(await s.index.rankingOf(ranked, options, 'rollups'), `${label} ranking ${JSON.stringify({ status, options })}`)
      .to.deep.equal(await s.index.rankingOf(ranked, options, 'rows'));
    expect(await s.index.queueRankingOf(ranked, options, 'rollups'), `${label} queue ranking ${JSON.stringify({ status, options })}`)
      .to.deep.equal(await s.index.queueRankingOf(ranked, options, 'rows'));

    const scoped: WorkloadFilter = { scope, ...(initiativeId ? { initiativeId } : {}) };
    expect(usageObject(await s.index.usage(scoped, { from: null, to: now })), `${label} usage`)
      .to.deep.equal(usageObject(await s.index.usageFrom(scoped, { from: null, to: now }, 'rows')));
  }
}

/** The list's total_count against COUNT(*) over the rows, for random filters without dates. */
async function expectCountsMatchRows(s: Store, seed: number, rounds: number): Promise<void> {
  const random = mulberry32(seed);
  for (let round = 0; round < rounds; round += 1) {
    const filter: WorkloadFilter = {
      scope: { organizationId: pick(random, ORGS), initiatives: pick(random, [null, ['llm', 'vision'], ['audio']]) },
      ...(random() < 0.3 ? { initiativeId: pick(random, INITIATIVES) } : {}),
      ...(random() < 0.4 ? { status: pick(random, WORKLOAD_STATUSES) } : {}),
      ...(random() < 0.3 ? { isManaged: random() < 0.5 } : {}),
      ...(random() < 0.2 ? { submittedBy: pick(random, ['alice', 'bob']) } : {}),
    };
    const where = whereOf(SQLITE, filter);
    const counted = (s.db.prepare(`SELECT COUNT(*) FROM workloads w WHERE ${where.sql}`).pluck().get(where.params) as number);
    expect((await s.index.list(filter, { limit: 1, after: null })).totalCount, JSON.stringify(filter)).to.equal(counted);
  }
}

sqliteOnly.describe('store/rollups (kept per batch by the writer, schema v4)', function () {
  this.timeout(120_000);
  let folder: ReturnType<typeof tempDir>;
  const opened: Database[] = [];

  function open(name: string): Store {
    const db = openDatabase(join(folder.dir, name));
    opened.push(db);
    const statements = new StatementCache(db);
    return { db, store: sqliteWriter(db, { clock: { now: () => T0 } }), index: sqliteIndex(db, statements), statements };
  }

  beforeEach(() => {
    folder = tempDir();
  });
  afterEach(() => {
    for (const db of opened.splice(0)) if (db.open) db.close();
    folder.remove();
  });

  it('gives the figures of the rows, to the last bit, through a whole history of writes', async () => {
    const s = open('index.db');
    const steps = history(1, 400);
    await write(s.store, steps.slice(0, Math.floor(steps.length / 2)));
    await expectRollupsMatchRows(s, 11, 50);
    await expectCountsMatchRows(s, 21, 50);
    await write(s.store, steps.slice(Math.floor(steps.length / 2)));
    await expectRollupsMatchRows(s, 12, 100);
    await expectCountsMatchRows(s, 22, 50);
    expect(rollupContents(s.db)).to.deep.equal(recomputedRollups(s.db));
  });

  it('stays exact through retention deletes, down to no workload at all', async () => {
    const s = open('index.db');
    await write(s.store, history(2, 300));
    const finished = s.db.prepare('SELECT COUNT(*) FROM workloads WHERE completed_at IS NOT NULL').pluck().get() as number;
    // Half of the finished ones first, by completion time, as retention deletes them.
    const median = s.db.prepare('SELECT completed_at FROM workloads WHERE completed_at IS NOT NULL ORDER BY completed_at LIMIT 1 OFFSET ?').pluck().get(Math.floor(finished / 2)) as number;
    while ((await s.store.deleteFinishedBatch(median, 7)) === 7);
    await expectRollupsMatchRows(s, 13, 40);
    await expectCountsMatchRows(s, 23, 30);
    expect(rollupContents(s.db)).to.deep.equal(recomputedRollups(s.db));
    while ((await s.store.deleteFinishedBatch(T0 + 30 * DAY_MS, 50)) === 50);
    await expectRollupsMatchRows(s, 14, 40);
    // The rows still unfinished finish, then go too: every rollup row is back to exactly 0.
    await s.store.upsertWorkloads(listUnfinished(s.statements, 'local').map((r) => ({ ...r, status: 'cancelled' as const, completedAt: T0, exitCode: 0, resourceVersion: '9' })));
    while ((await s.store.deleteFinishedBatch(T0 + 30 * DAY_MS, 50)) === 50);
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM workloads').get()).to.deep.equal({ n: 0 });
    expect(Object.values(rollupContents(s.db)).flat()).to.deep.equal([]);
    expect(await s.index.stats({ scope: { organizationId: 'acme', initiatives: null }, submittedFrom: 0 }, 'submitted_by', T0)).to.deep.equal({
      summary: { workloadCount: 0, gpuHours: 0, averageDurationSeconds: 0, successRate: 0, averageQueueSeconds: 0, ...NO_USAGE },
      groups: [],
    });
    expect(await s.index.rankByGpuHours({ scope: { organizationId: 'acme', initiatives: null } }, { order: 'desc', limit: 5, now: T0 }))
      .to.deep.equal({ entries: [], totalCount: 0, average: null });
    expect((await s.index.usage({ scope: { organizationId: 'acme', initiatives: null } }, { from: null, to: T0 })).total).to.equal(0);
  });

  it('holds what a backfill of the same rows holds, and a v2 file migrates to it', async () => {
    const steps = history(3, 300);
    const live = open('live.db');
    await write(live.store, steps);
    while ((await live.store.deleteFinishedBatch(T0 - 6 * DAY_MS, 10)) === 10);

    // The same rows in a file of schema v2, as the release before the rollups left it.
    const path = join(folder.dir, 'v2.db');
    const old = new BetterSqlite3(path);
    old.pragma('foreign_keys = ON');
    migrate(old, MIGRATIONS.filter((m) => m.version <= 2));
    copyRows(live.db, old);
    expect(schemaVersion(old)).to.equal(2);
    old.close();

    // v5 derives the old rows' failure reasons from their status: its rollup holds those.
    const migrated = open('v2.db');
    expect(schemaVersion(migrated.db)).to.equal(LATEST_VERSION);
    expect(rollupsBeforeV5(rollupContents(migrated.db))).to.deep.equal(rollupsBeforeV5(rollupContents(live.db)));
    expect(rollupContents(migrated.db)).to.deep.equal(recomputedRollups(migrated.db));
    expect(rollupContents(live.db)).to.deep.equal(recomputedRollups(live.db));
    await expectRollupsMatchRows(migrated, 15, 30);
  });

  it('carries the rollups of a v3 file (kept by its triggers) over to v4, and keeps them exact with the writes after', async () => {
    const steps = history(4, 300);
    const half = Math.floor(steps.length / 2);
    const live = open('live.db');

    // The rows of the first half in a file of schema v3, as the release before v4 left it: its
    // triggers keep the rollups, and the writer leaves them alone.
    const path = join(folder.dir, 'v3.db');
    const old = new BetterSqlite3(path);
    old.pragma('foreign_keys = ON');
    migrate(old, MIGRATIONS.filter((m) => m.version <= 3));
    expect(old.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all()).to.have.length(9);
    await write(live.store, steps.slice(0, half));
    while ((await live.store.deleteFinishedBatch(T0 - 8 * DAY_MS, 10)) === 10);
    copyRows(live.db, old);
    old.close();

    const migrated = open('v3.db');
    expect(schemaVersion(migrated.db)).to.equal(LATEST_VERSION);
    // v4 dropped the rollup triggers; the only ones left keep the telemetry tables (v2, v6), not the rollups.
    expect(migrated.db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name NOT LIKE '%usage%'").pluck().all()).to.deep.equal(['workloads_lifetime_delete']);
    expect(rollupsBeforeV5(rollupContents(migrated.db))).to.deep.equal(rollupsBeforeV5(rollupContents(live.db)));

    for (const s of [live, migrated]) {
      await write(s.store, steps.slice(half));
      while ((await s.store.deleteFinishedBatch(T0 - 6 * DAY_MS, 10)) === 10);
    }
    expect(rollupsBeforeV5(rollupContents(migrated.db))).to.deep.equal(rollupsBeforeV5(rollupContents(live.db)));
    expect(rollupContents(migrated.db)).to.deep.equal(recomputedRollups(migrated.db));
    await expectRollupsMatchRows(migrated, 16, 30);
    await expectCountsMatchRows(migrated, 24, 30);
  });

  it('fills the rollups per initiative (v10) and per submitter and week (v11) of a v9 file from its daily rollups, usage included, as the writes and triggers keep them', async () => {
    const live = open('live.db');
    await write(live.store, history(5, 300));
    // Usage for each workload at its row's keys (the triggers keep the usage rollups), some of it idle.
    live.db.exec(`INSERT INTO workload_usage (workload_id, util_seconds, util_weighted, idle_seconds, power_seconds, energy_dj, gpu_errors,
        organization_id, day, initiative_id, submitted_by, instance_type, failure_reason)
      SELECT workload_id, 60 + length(name), 600 * length(name), 30 * (gpu_count % 2), 60, 9000 + gpu_count, 0,
        organization_id, submitted_at / 86400000 - (submitted_at % 86400000 < 0), initiative_id, submitted_by, instance_type, COALESCE(failure_reason, '')
      FROM workloads`);

    const path = join(folder.dir, 'v9.db');
    const old = new BetterSqlite3(path);
    old.pragma('foreign_keys = ON');
    migrate(old, MIGRATIONS.filter((m) => m.version <= 9));
    copyRows(live.db, old);
    // What a v9 writer kept: the rollups it wrote, and usage (its triggers keep the usage rollups).
    const v9Tables = new Set(old.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
    for (const table of [...ROLLUPS.map((r) => r.table).filter((t) => v9Tables.has(t)), 'workload_usage']) {
      const rows = live.db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      const insert = old.prepare(`INSERT INTO ${table} VALUES (${Object.keys(rows[0] ?? {}).map((c) => `@${c}`).join(', ')})`);
      for (const row of rows) insert.run(row);
    }
    old.close();

    const migrated = open('v9.db');
    expect(schemaVersion(migrated.db)).to.equal(LATEST_VERSION);
    // Rows summing to nothing (a writer keeps them, a fill has none) aside.
    for (const table of ['stats_daily_initiative', 'stats_weekly_submitter']) {
      const rowsOf = (db: Database) => rollupContents(db)[table];
      expect(rowsOf(migrated.db), table).to.have.length.greaterThan(5).and.deep.equal(rowsOf(live.db));
    }
    for (const table of ['stats_daily_usage_initiative', 'stats_weekly_usage_submitter']) {
      const usageOf = (db: Database) => db.prepare(`SELECT * FROM ${table} WHERE util_seconds <> 0 OR power_seconds <> 0 ORDER BY 1, 2, 3, 4`).all();
      expect(usageOf(migrated.db), table).to.have.length.greaterThan(5).and.deep.equal(usageOf(live.db));
    }
    // From then on the writer and the triggers keep them exact: usage grown and deleted, rows retained away.
    migrated.db.exec("UPDATE workload_usage SET util_seconds = util_seconds + 5 WHERE workload_id IN (SELECT workload_id FROM workload_usage ORDER BY workload_id LIMIT 3)");
    migrated.db.exec('DELETE FROM workload_usage WHERE workload_id IN (SELECT workload_id FROM workload_usage ORDER BY workload_id DESC LIMIT 3)');
    while ((await migrated.store.deleteFinishedBatch(T0 - 6 * DAY_MS, 10)) === 10);
    expect(rollupContents(migrated.db)).to.deep.equal(recomputedRollups(migrated.db));
    const state = await usageState(async (sql) => migrated.db.prepare(sql).all() as Record<string, unknown>[], (c) => `(${c} / 86400000 - (${c} % 86400000 < 0))`);
    expect(state.rollup['stats_daily_usage_initiative']).to.have.length.greaterThan(10);
    expect(state.rollup['stats_weekly_usage_submitter']).to.have.length.greaterThan(5);
    expect(state.rollup).to.deep.equal(state.recomputed);
    await expectRollupsMatchRows(migrated, 17, 30);
  });

  it('moves a v11 file to REAL open GPUs (v12) with every figure, index and read as it was, to the last bit', async () => {
    const live = open('live.db');
    await write(live.store, history(5, 300));
    const path = join(folder.dir, 'v11.db');
    const old = new BetterSqlite3(path);
    old.pragma('foreign_keys = ON');
    migrate(old, MIGRATIONS.filter((m) => m.version <= 11));
    copyRows(live.db, old);
    for (const table of ROLLUPS.map((r) => r.table)) {
      const rows = live.db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      const insert = old.prepare(`INSERT INTO ${table} VALUES (${Object.keys(rows[0] ?? {}).map((c) => `@${c}`).join(', ')})`);
      for (const row of rows) insert.run(row);
    }
    const rowsOf = (db: Database) => db.prepare('SELECT workload_id, gpu_count, gpu_seconds_closed, open_gpus, open_gpu_start_sum FROM workloads ORDER BY 1').all();
    const podsOf = (db: Database) => db.prepare('SELECT pod_uid, workload_id, gpus, started_at, finished_at FROM workload_pods ORDER BY 1').all();
    // The tables of later versions (the fleet's history, v14) bring indexes of their own.
    const indexesOf = (db: Database) => db.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name NOT LIKE 'fleet_%' ORDER BY name",
    ).all();
    const before = { rows: rowsOf(old), pods: podsOf(old), rollups: rollupContents(old), indexes: indexesOf(old) };
    expect(before.pods).to.have.length.greaterThan(100);
    old.close();

    const migrated = open('v11.db');
    expect(schemaVersion(migrated.db)).to.equal(LATEST_VERSION);
    expect({ rows: rowsOf(migrated.db), pods: podsOf(migrated.db), rollups: rollupContents(migrated.db), indexes: indexesOf(migrated.db) })
      .to.deep.equal(before);
    const types = migrated.db.prepare("SELECT DISTINCT typeof(gpus) FROM workload_pods UNION ALL SELECT DISTINCT 'w:' || typeof(open_gpus) FROM workloads").pluck().all();
    expect(types).to.deep.equal(['real', 'w:real']);
    expect(migrated.db.prepare('SELECT COUNT(*) FROM workloads WHERE allocated_gpus IS NOT NULL OR gpu_sharing IS NOT NULL OR gpu_model IS NOT NULL').pluck().get()).to.equal(0);
    expect(migrated.db.pragma('foreign_key_check')).to.deep.equal([]);
    expect(migrated.db.pragma('integrity_check', { simple: true })).to.equal('ok');
    await expectRollupsMatchRows(migrated, 31, 30);
    // A pod's cascade still holds: retention of the rows takes their pods with them.
    while ((await migrated.store.deleteFinishedBatch(T0 + 365 * DAY_MS, 50)) === 50);
    const orphans = migrated.db.prepare('SELECT COUNT(*) FROM workload_pods WHERE workload_id NOT IN (SELECT workload_id FROM workloads)').pluck().get();
    expect(orphans).to.equal(0);
  });

  it('sums shares of a GPU (a seventh, a quarter) in the rollups as the rows do, to far below what the API shows', async () => {
    const s = open('index.db');
    const shares = [1 / 7, 3 / 7, 0.25, 0.5, 0.3, 2000 / 81559];
    const steps = history(7, 300).map((step, k) => ('pods' in step
      ? { pods: step.pods.map((pod, p) => ({ ...pod, share: pod.gpus * (shares[(k + p) % shares.length] as number) })) }
      : step));
    await write(s.store, steps);
    expect(s.db.prepare('SELECT COUNT(*) FROM workload_pods WHERE gpus <> CAST(gpus AS INTEGER)').pluck().get()).to.be.greaterThan(50);
    const random = mulberry32(41);
    for (let round = 0; round < 30; round += 1) {
      const now = T0 - 2 * DAY_MS + Math.floor(random() * 4 * DAY_MS);
      const filter: WorkloadFilter = { scope: { organizationId: pick(random, ORGS), initiatives: null }, submittedFrom: now - pick(random, [1, 7, 30]) * DAY_MS, submittedBefore: now + 1 };
      for (const groupBy of GROUPS) {
        const raw = rawStatsRows(s, filter, groupBy, now);
        const rolled = rollupStatsRows(s, filter, groupBy, now);
        expect(rolled.length, `${round} ${groupBy}`).to.equal(raw.length);
        rolled.forEach((row, i) => {
          for (const [key, value] of Object.entries(row as unknown as Record<string, unknown>)) {
            const expected = (raw[i] as unknown as Record<string, unknown>)[key];
            // GPU-ms summed in another order: equal to a millionth of a GPU-hour (the API shows four decimals).
            if (typeof value === 'number' && typeof expected === 'number') expect(value, `${round} ${groupBy} ${key}`).to.be.closeTo(expected, 3.6);
            else expect(value, `${round} ${groupBy} ${key}`).to.equal(expected);
          }
        });
      }
    }
  });

  it('reads running workloads at any time, before and after their pods started', async () => {
    const s = open('index.db');
    const start = T0 - 3 * HOUR_MS + 123;
    const running = aWorkload({ submittedAt: start - 1000, startedAt: start, completedAt: null, status: 'running', exitCode: null, gpuCount: 8 });
    await s.store.upsertWorkloads([running]);
    await s.store.upsertPodIntervals([aPodInterval(running), aPodInterval(running, { podUid: 'late', gpus: 2, startedAt: T0 + HOUR_MS, finishedAt: null })]);
    const filter: WorkloadFilter = { scope: { organizationId: 'acme', initiatives: null }, submittedFrom: T0 - 30 * DAY_MS };
    for (const hours of [-4, -3, -1, 0, 0.5, 1, 2, 24]) {
      const now = T0 + hours * HOUR_MS;
      // 8 GPUs from `start`, 2 more from T0 + 1 h: each floored at 0 as a whole workload.
      const expected = Math.max(0, (8 * (now - start) + 2 * (now - T0 - HOUR_MS)) / 3_600_000);
      const { summary } = await s.index.stats({ ...filter, submittedBefore: now + 1 }, null, now);
      expect(summary.gpuHours, `${hours} h`).to.be.closeTo(expected, 1e-9);
      expect(summary.averageDurationSeconds, `${hours} h`).to.equal(Math.max(0, now - start) / 1000);
      for (const groupBy of GROUPS) {
        const window = { ...filter, submittedBefore: now + 1 };
        expect(rollupStatsRows(s, window, groupBy, now)).to.deep.equal(rawStatsRows(s, window, groupBy, now));
      }
    }
  });

  it('puts a workload on the day of its submission, midnight included', async () => {
    const s = open('index.db');
    const midnight = T0 - 2 * DAY_MS;
    const onTheDot = aWorkload({ submittedAt: midnight, submittedBy: 'on-the-dot' });
    const justBefore = aWorkload({ submittedAt: midnight - 1, submittedBy: 'just-before' });
    await s.store.upsertWorkloads([onTheDot, justBefore]);
    const scope: Scope = { organizationId: 'acme', initiatives: null };
    const keys = async (from: number | undefined, before: number | undefined) =>
      (await s.index.stats({ scope, submittedFrom: from, submittedBefore: before }, 'submitted_by', T0)).groups.map((g) => g.key).sort();
    expect(await keys(midnight, T0)).to.deep.equal(['on-the-dot']);
    expect(await keys(midnight - 1, T0)).to.deep.equal(['just-before', 'on-the-dot']);
    expect(await keys(midnight - DAY_MS, midnight)).to.deep.equal(['just-before']);
    expect(await keys(midnight - 1, midnight)).to.deep.equal(['just-before']);
    expect(await keys(midnight, midnight + 1)).to.deep.equal(['on-the-dot']);
    expect(await keys(midnight + 1, T0)).to.deep.equal([]);
    expect(await keys(undefined, midnight)).to.deep.equal(['just-before']);
    expect(await keys(midnight, undefined)).to.deep.equal(['on-the-dot']);
  });

  it('follows the GPU aggregates when pods change after a workload finished', async () => {
    const s = open('index.db');
    const done = aWorkload({ submittedAt: T0 - DAY_MS, startedAt: T0 - DAY_MS + HOUR_MS, completedAt: T0 - DAY_MS + 3 * HOUR_MS, gpuCount: 4 });
    await s.store.upsertWorkloads([done]);
    await s.store.upsertPodIntervals([aPodInterval(done, { finishedAt: null })]);
    const summary = async () => (await s.index.stats({ scope: { organizationId: 'acme', initiatives: null }, submittedFrom: T0 - 7 * DAY_MS, submittedBefore: T0 }, null, T0)).summary;
    expect((await summary()).gpuHours).to.equal(8); // the open pod counts up to the completion
    await s.store.closeOpenIntervals([done.workloadId], T0 - DAY_MS + 2 * HOUR_MS);
    expect((await summary()).gpuHours).to.equal(4);
    await s.store.upsertPodIntervals([aPodInterval(done, { podUid: 'retry', gpus: 1, startedAt: T0 - DAY_MS + 2 * HOUR_MS, finishedAt: T0 - DAY_MS + 3 * HOUR_MS })]);
    expect((await summary()).gpuHours).to.equal(5);
    const ranking = await s.index.rankByGpuHours({ scope: { organizationId: 'acme', initiatives: null } }, { order: 'desc', limit: 1, now: T0 });
    expect(ranking).to.deep.include({ totalCount: 1, average: 5 });
    expect((await s.index.usage({ scope: { organizationId: 'acme', initiatives: null } }, { from: null, to: T0 })).total).to.equal(5);
  });
});
