// PostgreSQL's read side (src/store/reads/workload-index.ts) against SQLite's on the same rows: every
// WorkloadIndex method, over a matrix of filters, scopes, cursors (every page walked), groupings,
// orders, times of reading and windows, must give deep-equal answers. Both run the shared builders
// (src/store/'s builders), one rendered for each engine, so this is where the dialect is proved.
//
// Floating-point figures are compared exactly, not within a tolerance: every sum is taken in whole
// GPU-ms and ms (exact in any order below 2^53), and the per-row GPU-hours come from the same
// aggregates (postgres-reads-seed.ts computes them as SQLite does, to the last bit).
import { expect } from 'chai';
import pg from 'pg';
import type { Scope } from '../../../src/access/principal.js';
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import type { Keyset, ListPage, StatsGroupKey, UsageBreakdown, WorkloadFilter, WorkloadIndex } from '../../../src/query/ports.js';
import { IndexBusyError } from '../../../src/query/ports.js';
import { postgresIndex } from '../../../src/store/postgres/read-index.js';
import type { SqlWorkloadIndex } from '../../../src/store/reads/workload-index.js';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { generate, GENERATED_NOW, seedPostgres } from '../postgres-reads-seed.js';
import { at, HOUR_MS, openTempStore, type TempStore } from '../temp-store.js';

const DAY = 24 * HOUR_MS;
/** The time of reading of generate()'s rows. */
const NOW = GENERATED_NOW;

type Described = Record<string, unknown>;
const sortedObject = (m: Map<string, unknown>): Described => Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const usageObject = (u: UsageBreakdown) => ({ total: u.total, byInitiative: sortedObject(u.byInitiative), byInstanceType: sortedObject(u.byInstanceType) });

const scope = (initiatives: readonly string[] | null, organizationId = 'acme'): Scope => ({ organizationId, initiatives });
const manyTeams = ['llm', 'vision', 'audio', 'infra', 'speech', ...Array.from({ length: 40 }, (_, i) => `extra-${i}`)];

/** Filters as the API builds them, and the ones only other callers use (submitter and dates in a ranking). */
const FILTERS: Record<string, WorkloadFilter> = {
  'organization': { scope: scope(null) },
  'other organization': { scope: scope(null, 'globex') },
  'unknown organization': { scope: scope(null, 'nobody') },
  'one team': { scope: scope(['vision']) },
  'three teams': { scope: scope(['llm', 'audio', 'speech', 'llm']) },
  'teams beyond the seeks': { scope: scope(manyTeams) },
  'no teams': { scope: scope([]) },
  'initiative': { scope: scope(null), initiativeId: 'infra' },
  'teams and initiative': { scope: scope(['llm', 'vision']), initiativeId: 'vision' },
  'teams and initiative outside them': { scope: scope(['llm']), initiativeId: 'vision' },
  'running': { scope: scope(null), status: 'running' },
  'failed in a team': { scope: scope(['audio']), status: 'failed' },
  'submitter': { scope: scope(null), submittedBy: 'carol' },
  'unmanaged': { scope: scope(null), isManaged: false },
  'managed by submitter in teams': { scope: scope(['llm', 'infra']), isManaged: true, submittedBy: 'alice' },
  'last 30 days': { scope: scope(null), submittedFrom: NOW - 30 * DAY, submittedBefore: NOW + 1 },
  'last 30 days of a team': { scope: scope(['speech', 'llm']), submittedFrom: NOW - 30 * DAY, submittedBefore: NOW + 1 },
  'since a month start': { scope: scope(null), submittedFrom: at('2026-10-01T00:00:00Z') },
  'before a month start': { scope: scope(null), submittedBefore: at('2026-10-01T00:00:00Z') },
  'odd window': { scope: scope(null), submittedFrom: at('2026-08-17T05:43:10.001Z'), submittedBefore: at('2026-09-23T22:01:00.999Z') },
  'within one day': { scope: scope(null), submittedFrom: at('2026-09-12T03:00:00Z'), submittedBefore: at('2026-09-12T21:00:00Z') },
  'dated status': { scope: scope(null), status: 'completed', submittedFrom: at('2026-09-01T00:00:00Z'), submittedBefore: at('2026-10-15T00:00:00Z') },
};

describe('PostgreSQL reads, against SQLite on the same rows', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  let pool: pg.Pool;
  let sqlite: TempStore;
  let postgres: SqlWorkloadIndex;
  let data: { workloads: WorkloadRecord[]; pods: PodGpuInterval[] };

  before(async function () {
    db = await freshDatabase(this);
    data = generate(1, 1_500);
    sqlite = openTempStore();
    await sqlite.store.upsertWorkloads(data.workloads);
    await sqlite.store.upsertPodIntervals(data.pods);
    const client = new pg.Client({ connectionString: db.url, types: TYPES });
    await client.connect();
    try {
      await seedPostgres(client, data);
    } finally {
      await client.end();
    }
    pool = new pg.Pool({ connectionString: db.url, types: TYPES, max: 4 });
    postgres = postgresIndex(pool);
  });
  after(async () => {
    await pool?.end();
    sqlite?.close();
    await db?.drop();
  });

  const both = (): [string, WorkloadIndex][] => [['sqlite', sqlite.index], ['postgres', postgres]];

  it('holds the same rows, GPU aggregates and rollups on both', async () => {
    const query = (table: string, order: string) => `SELECT * FROM ${table} ORDER BY ${order}`;
    const tables: [string, string][] = [
      ['workloads', 'workload_id'],
      ['workload_pods', 'pod_uid'],
      ['workload_counts', 'organization_id, initiative_id, status, submitted_by, is_managed'],
      ['stats_daily_submitter', 'organization_id, day, initiative_id, submitted_by'],
      ['stats_daily_instance_type', 'organization_id, day, initiative_id, instance_type'],
      ['workload_totals', 'organization_id, initiative_id, status, instance_type'],
      ['stats_daily_initiative', 'organization_id, day, initiative_id'],
      ['stats_weekly_submitter', 'organization_id, day, initiative_id, submitted_by'],
    ];
    for (const [table, order] of tables) {
      const lite = (sqlite.db.prepare(query(table, order)).all() as Record<string, unknown>[]).map((row) => {
        const { updated_at: _u, ...rest } = row;
        return rest;
      });
      const { rows } = await pool.query(query(table, order));
      // PostgreSQL's pods carry their workload's submitted_at (the partition key); SQLite's do not.
      const pgRows = rows.map((row: Record<string, unknown>) => {
        const { updated_at: _u, ...rest } = row;
        if (table === 'workload_pods') delete rest['submitted_at'];
        return rest;
      });
      // A rollup row that SQLite's triggers emptied stays with zeros; PostgreSQL's rebuild has none.
      const kept = table.startsWith('stats_') || table === 'workload_totals' ? lite.filter((r) => r['workloads'] !== 0) : table === 'workload_counts' ? lite.filter((r) => r['n'] !== 0) : lite;
      expect(pgRows, table).to.deep.equal(kept);
    }
  });

  it('lists the same pages, every page walked, with the same counts', async () => {
    for (const [name, filter] of Object.entries(FILTERS)) {
      for (const limit of [1, 7, 100]) {
        if (limit === 1 && !name.includes('team')) continue;
        const walks = await Promise.all(both().map(async ([, index]) => {
          const pages: ListPage[] = [];
          let after: Keyset | null = null;
          for (let n = 0; n < 400; n += 1) {
            const page: ListPage = await index.list(filter, { limit, after });
            pages.push(page);
            const last = page.items.at(-1);
            if (!page.hasMore || last === undefined) break;
            after = { submittedAt: last.submittedAt, workloadId: last.workloadId };
          }
          return pages;
        }));
        expect(walks[1], `${name}, pages of ${limit}`).to.deep.equal(walks[0]);
      }
    }
  });

  it('lists after cursors that are not rows: between ties, beyond an end date, past every row', async () => {
    const cursors: Keyset[] = [
      { submittedAt: at('2026-10-01T00:00:00Z'), workloadId: 'w-' },
      { submittedAt: at('2026-10-01T00:00:00Z') - 1, workloadId: 'zzz' },
      { submittedAt: NOW + DAY, workloadId: 'a' },
      { submittedAt: 0, workloadId: '' },
    ];
    for (const [name, filter] of Object.entries(FILTERS)) {
      for (const after of cursors) {
        const [lite, post] = await Promise.all(both().map(([, index]) => index.list(filter, { limit: 5, after })));
        expect(post, `${name} after ${JSON.stringify(after)}`).to.deep.equal(lite);
      }
    }
  });

  it('gets every workload, read at several times, and nothing for an unknown id', async () => {
    for (const now of [NOW, NOW - 40 * DAY, NOW + 3 * HOUR_MS]) {
      for (const workload of data.workloads.filter((_, i) => i % 3 === 0)) {
        const [lite, post] = await Promise.all(both().map(([, index]) => index.get(workload.workloadId, now)));
        expect(post, `${workload.workloadId} at ${now}`).to.deep.equal(lite);
      }
    }
    expect(await postgres.get('unknown', NOW)).to.equal(undefined);
  });

  it('gives the same statistics, to the last bit, for every grouping and time of reading', async () => {
    const groups: (StatsGroupKey | null)[] = [null, 'submitted_by', 'initiative_id', 'instance_type'];
    for (const now of [NOW, NOW - 61 * DAY + 12_345, NOW + 5 * HOUR_MS]) {
      for (const [name, filter] of Object.entries(FILTERS)) {
        for (const groupBy of groups) {
          const [lite, post] = await Promise.all(both().map(([, index]) => index.stats(filter, groupBy, now)));
          expect(post, `${name} by ${groupBy} at ${now}`).to.deep.equal(lite);
        }
      }
    }
  });

  it('gives the same series by day and by week, to the last bit, for every grouping', async () => {
    const groups: (StatsGroupKey | null)[] = [null, 'submitted_by', 'initiative_id', 'failure_reason'];
    for (const now of [NOW, NOW + 5 * HOUR_MS]) {
      for (const [name, filter] of Object.entries(FILTERS)) {
        for (const groupBy of groups) {
          for (const interval of ['day', 'week'] as const) {
            const [lite, post] = await Promise.all(both().map(([, index]) => index.trends(filter, { groupBy, interval }, now)));
            expect(post, `${name} by ${groupBy} per ${interval} at ${now}`).to.deep.equal(lite);
          }
        }
      }
    }
  });

  it('ranks the same workloads by GPU-hours, from the indexes and from the rows', async () => {
    const rankingFilters: Record<string, WorkloadFilter> = {
      ...FILTERS,
      'cancelled': { scope: scope(null), status: 'cancelled' },
      'pending in teams': { scope: scope(['llm', 'vision']), status: 'pending' },
    };
    for (const now of [NOW, NOW - 20 * DAY, NOW + 2 * HOUR_MS]) {
      for (const [name, filter] of Object.entries(rankingFilters)) {
        for (const options of [{ order: 'desc' as const, limit: 10, now }, { order: 'asc' as const, limit: 25, now }, { order: 'desc' as const, limit: 1, now }]) {
          const label = `${name} ${JSON.stringify(options)}`;
          const [lite, post] = await Promise.all(both().map(([, index]) => index.rankByGpuHours(filter, options)));
          expect(post, label).to.deep.equal(lite);
          expect(await postgres.rankingOf(filter, options, 'rows'), `${label} over the rows`).to.deep.equal(await sqlite.index.rankingOf(filter, options, 'rows'));
        }
      }
    }
  });

  it('describes the same workloads', async () => {
    const ids = [...data.workloads.filter((_, i) => i % 7 === 0).map((w) => w.workloadId), 'unknown', ''];
    for (const [name, filter] of Object.entries(FILTERS)) {
      for (const list of [ids, [], ids.slice(0, 1)]) {
        const [lite, post] = await Promise.all(both().map(async ([, index]) => sortedObject(await index.describe(list, filter))));
        expect(post, name).to.deep.equal(lite);
      }
    }
  });

  it('gives the same usage in every window, since ever from the rollups and from the rows', async () => {
    const windows = [
      { from: null, to: NOW },
      { from: null, to: NOW - 45 * DAY - 7 },
      { from: null, to: NOW + 4 * HOUR_MS },
      { from: at('2026-10-01T00:00:00Z'), to: at('2026-11-01T00:00:00Z') },
      { from: at('2026-07-01T00:00:00Z'), to: NOW },
      { from: NOW - 7 * DAY + 1234, to: NOW - 2 * HOUR_MS },
      { from: 0, to: NOW + 10 * HOUR_MS },
    ];
    for (const [name, filter] of Object.entries(FILTERS)) {
      for (const window of windows) {
        const label = `${name} ${JSON.stringify(window)}`;
        const [lite, post] = await Promise.all(both().map(async ([, index]) => usageObject(await index.usage(filter, window))));
        expect(post, label).to.deep.equal(lite);
        const rows = usageObject(await postgres.usageFrom(filter, window, 'rows'));
        expect(rows, `${label} over the rows`).to.deep.equal(usageObject(await sqlite.index.usageFrom(filter, window, 'rows')));
      }
    }
  });

  it('sums the same active GPUs', async () => {
    for (const [name, filter] of Object.entries(FILTERS)) {
      const [lite, post] = await Promise.all(both().map(([, index]) => index.activeGpus(filter)));
      expect(post, name).to.equal(lite);
    }
  });

  it('answers IndexBusyError when the database cannot be reached, and a query error as itself', async () => {
    const closed = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', types: TYPES, connectionTimeoutMillis: 1000 });
    try {
      const failed = await postgresIndex(closed).list({ scope: scope(null) }, { limit: 5, after: null }).then(() => null, (error: unknown) => error);
      expect(failed).to.be.instanceOf(IndexBusyError);
      expect((failed as IndexBusyError).retryAfterSeconds).to.equal(2);
    } finally {
      await closed.end();
    }
    const missing = new pg.Pool({ connectionString: db.url, types: TYPES, max: 1 });
    try {
      await missing.query('ALTER TABLE workload_totals RENAME TO workload_totals_gone');
      const failed = await postgresIndex(missing).list({ scope: scope(null) }, { limit: 5, after: null }).then(() => null, (error: unknown) => error);
      expect(failed).to.be.instanceOf(Error).and.not.instanceOf(IndexBusyError);
      expect((failed as Error).message).to.match(/workload_totals/);
      // The failed transaction gave its connection back in a usable state.
      expect((await missing.query('SELECT 1 AS one')).rows).to.deep.equal([{ one: 1 }]);
    } finally {
      await missing.query('ALTER TABLE workload_totals_gone RENAME TO workload_totals').catch(() => undefined);
      await missing.end();
    }
  });
});
