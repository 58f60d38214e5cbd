// Named statements on the PostgreSQL read side (src/store/postgres/prepared-statements.ts, read-queries.ts,
// workload-index.ts): which reads prepare their statements and run them on generic plans, that a
// connection keeps them from one read to the next, and that a new connection, a failed statement or
// a migration under a prepared statement never leaves a read failing for good. The read pool here has
// one connection, so that pg_prepared_statements, read through it, shows what the reads left there.
import { expect } from 'chai';
import pg from 'pg';
import type { WorkloadFilter } from '../../../src/query/ports.js';
import { IndexBusyError } from '../../../src/query/ports.js';
import { createReadPool, TYPES, type ConnectionLogger } from '../../../src/store/postgres/connection.js';
import { isStaleStatement, PreparedStatements } from '../../../src/store/postgres/prepared-statements.js';
import { postgresIndex } from '../../../src/store/postgres/read-index.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { waitFor } from '../../support/wait-for.js';
import { generate, GENERATED_NOW, seedPostgres } from '../postgres-reads-seed.js';
import { HOUR_MS } from '../temp-store.js';

const NOW = GENERATED_NOW;
const ORG: WorkloadFilter = { scope: { organizationId: 'acme', initiatives: null } };
const PAGE = { limit: 5, after: null };

interface Prepared {
  name: string;
  generic_plans: number;
  custom_plans: number;
}

class RecordingLogger implements ConnectionLogger {
  readonly warnings: string[] = [];
  warn(_fields: object, message: string): void {
    this.warnings.push(message);
  }
}

describe('PostgreSQL reads as named statements', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let logger: RecordingLogger;
  let pool: pg.Pool;
  /** A session of its own, for schema changes and for ending the pool's session. */
  let admin: pg.Client;

  beforeEach(async function () {
    db = await freshDatabase(this);
    admin = new pg.Client({ connectionString: db.url, types: TYPES });
    await admin.connect();
    await seedPostgres(admin, generate(3, 300));
    logger = new RecordingLogger();
    pool = createReadPool(db.url, { instanceId: 'replica-1', logger, size: 1 });
  });
  afterEach(async () => {
    await pool?.end();
    await admin?.end();
    await db?.drop();
  });

  /** The statements prepared on the pool's one connection, by name. */
  async function prepared(): Promise<Prepared[]> {
    const { rows } = await pool.query<Prepared>('SELECT name, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY name');
    return rows;
  }

  it('a list page runs with its count as one named statement, prepared once per connection, on its generic plan from the sixth call', async () => {
    const index = postgresIndex(pool);
    const first = await index.list(ORG, PAGE);
    const cursor = { submittedAt: first.items[4]?.submittedAt ?? 0, workloadId: first.items[4]?.workloadId ?? '' };
    await index.list(ORG, { limit: 7, after: cursor });
    await index.list({ scope: { organizationId: 'globex', initiatives: null } }, { limit: 3, after: cursor });
    const statements = await prepared();
    // The first page and the later ones differ by the cursor's terms; all three read 21 rows.
    expect(statements.map((s) => s.name)).to.have.length(2).and.to.satisfy((names: string[]) => names.every((n) => /^gpucap_0_[0-9a-f]{24}$/.test(n)));
    expect(statements.map((s) => s.custom_plans + s.generic_plans).sort()).to.deep.equal([1, 2]);
    for (let i = 0; i < 6; i += 1) expect(await index.list(ORG, PAGE)).to.deep.equal(first);
    // plan_cache_mode = auto: five plans for the values, then the generic plan, kept from then on.
    expect((await prepared()).map((s) => [s.custom_plans, s.generic_plans]).sort()).to.deep.equal([[2, 0], [5, 2]]);
    expect((await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows).to.deep.equal([{ plan_cache_mode: 'auto' }]);
  });

  it('reads one of a few fixed row counts, so that page sizes share statements', async () => {
    const index = postgresIndex(pool);
    const pages = await Promise.all([1, 20, 21, 50, 100].map(async (limit) => index.list(ORG, { limit, after: null })));
    expect(pages.map((p) => p.items.length)).to.deep.equal([1, 20, 21, 50, 100]);
    expect(pages.every((p) => p.hasMore && p.totalCount === pages[0]?.totalCount)).to.equal(true);
    expect(pages[4]?.items.slice(0, 50)).to.deep.equal(pages[3]?.items);
    // 1 and 20 read 21 rows, 21 and 50 read 51, 100 reads 101.
    expect(await prepared()).to.have.length(3);
  });

  it('a list by one column and a team\'s list of one status run on generic plans too, and a TEAM_LEAD\'s from its first call', async () => {
    const index = postgresIndex(pool);
    const reads: WorkloadFilter[] = [{ ...ORG, status: 'failed' }, { ...ORG, submittedBy: 'carol' }, { ...ORG, status: 'failed', initiativeId: 'llm' }];
    for (const filter of reads) for (let i = 0; i < 6; i += 1) await index.list(filter, PAGE);
    const statements = await prepared();
    expect(statements.map((s) => [s.custom_plans, s.generic_plans])).to.deep.equal([[5, 1], [5, 1], [5, 1]]);
    // The seek of each team unnests the teams, a list of a length that only a custom plan knows:
    // auto would plan it at every call, so it runs its generic plan by force.
    for (let i = 0; i < 6; i += 1) await index.list({ scope: { organizationId: 'acme', initiatives: ['llm', 'audio'] } }, PAGE);
    const seeks = (await prepared()).filter((s) => !statements.some((t) => t.name === s.name));
    expect(seeks.map((s) => [s.custom_plans, s.generic_plans])).to.deep.equal([[0, 6]]);
  });

  it('lists by two columns or by dates, and statistics, stay unnamed: planned for their values', async () => {
    const index = postgresIndex(pool);
    await index.list({ ...ORG, status: 'failed', submittedBy: 'carol' }, PAGE);
    await index.list({ scope: { organizationId: 'acme', initiatives: ['llm'] }, submittedBy: 'carol' }, PAGE);
    await index.list({ ...ORG, submittedFrom: NOW - 30 * 24 * HOUR_MS, submittedBefore: NOW }, PAGE);
    await index.stats({ ...ORG, submittedFrom: NOW - 30 * 24 * HOUR_MS, submittedBefore: NOW + 1 }, 'submitted_by', NOW);
    expect(await prepared()).to.deep.equal([]);
  });

  it('a lookup by id is prepared once, and plan_cache_mode = auto takes its generic plan after five calls', async () => {
    const index = postgresIndex(pool);
    const [{ id } = { id: '' }] = (await admin.query<{ id: string }>('SELECT workload_id AS id FROM workloads ORDER BY workload_id LIMIT 1')).rows;
    for (let i = 0; i < 7; i += 1) expect((await index.get(id, NOW))?.workloadId).to.equal(id);
    expect(await index.get('no-such-workload', NOW)).to.equal(undefined);
    expect((await prepared()).map((s) => [s.custom_plans, s.generic_plans])).to.deep.equal([[5, 3]]);
  });

  it('with preparedStatements off, the same answers come from unnamed statements', async () => {
    const on = postgresIndex(pool);
    const off = postgresIndex(pool, { preparedStatements: false });
    const filters: WorkloadFilter[] = [ORG, { ...ORG, status: 'running' }, { scope: { organizationId: 'acme', initiatives: ['vision', 'infra'] } }];
    for (const filter of filters) expect(await off.list(filter, PAGE), JSON.stringify(filter)).to.deep.equal(await on.list(filter, PAGE));
    await pool.end();
    pool = createReadPool(db.url, { instanceId: 'replica-1', logger, size: 1 });
    const index = postgresIndex(pool, { preparedStatements: false });
    const [{ id } = { id: '' }] = (await admin.query<{ id: string }>('SELECT workload_id AS id FROM workloads LIMIT 1')).rows;
    for (const filter of filters) await index.list(filter, PAGE);
    await index.get(id, NOW);
    expect(await prepared()).to.deep.equal([]);
  });

  it('a new connection prepares its statements again', async () => {
    const index = postgresIndex(pool);
    const before = await index.list(ORG, PAGE);
    const { rows: [held] } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [held?.pid]);
    await waitFor(() => logger.warnings.length > 0, { timeoutMs: 5_000, what: 'the pool to drop its ended connection' });
    expect(await index.list(ORG, PAGE)).to.deep.equal(before);
    expect((await prepared()).map((s) => s.custom_plans + s.generic_plans)).to.deep.equal([1]);
  });

  it('a read whose statement failed succeeds once the cause is gone', async () => {
    const index = postgresIndex(pool);
    const before = await index.list(ORG, PAGE);
    await admin.query('ALTER TABLE workload_totals RENAME TO workload_totals_gone');
    const failed = await index.list(ORG, PAGE).then(() => null, (error: unknown) => error);
    expect(failed).to.be.instanceOf(Error).and.not.instanceOf(IndexBusyError);
    expect((failed as Error).message).to.match(/workload_totals/);
    await admin.query('ALTER TABLE workload_totals_gone RENAME TO workload_totals');
    expect(await index.list(ORG, PAGE)).to.deep.equal(before);
  });

  it('a migration that changes what a prepared statement returns costs no failed read: it runs again under new names', async () => {
    await pool.end();
    pool = createReadPool(db.url, { instanceId: 'replica-1', logger, size: 2 });
    const index = postgresIndex(pool);
    const [{ id } = { id: '' }] = (await admin.query<{ id: string }>('SELECT workload_id AS id FROM workloads LIMIT 1')).rows;
    // Both connections prepare the list's statements and the lookup's.
    const [before] = await Promise.all([index.list(ORG, PAGE), index.list(ORG, PAGE)]);
    const found = await Promise.all([index.get(id, NOW), index.get(id, NOW)]);
    await admin.query('ALTER TABLE workloads ALTER COLUMN exit_code TYPE bigint');
    for (let i = 0; i < 3; i += 1) {
      expect(await index.list(ORG, PAGE)).to.deep.equal(before);
      expect(await index.get(id, NOW)).to.deep.equal(found[0]);
    }
    expect(await Promise.all([index.list(ORG, PAGE), index.list(ORG, PAGE)])).to.deep.equal([before, before]);
  });
});

describe('PreparedStatements', () => {
  const resultTypeChanged = Object.assign(new Error('cached plan must not change result type'), { code: '0A000' });

  it('names a text by its hash, the same text the same name, within PostgreSQL\'s 63 bytes', () => {
    const names = new PreparedStatements();
    const name = names.nameOf('SELECT 1');
    expect(name).to.match(/^gpucap_0_[0-9a-f]{24}$/);
    expect(names.nameOf('SELECT 1')).to.equal(name);
    expect(names.nameOf('SELECT 2')).to.not.equal(name);
    expect(new PreparedStatements().nameOf('SELECT 1')).to.equal(name);
  });

  it('starts the names afresh once for reads that fail together on stale statements, never for other errors', () => {
    const names = new PreparedStatements();
    const seen = names.generation;
    expect(names.renewAfter(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }), seen)).to.equal(false);
    expect(names.renewAfter(Object.assign(new Error('not supported'), { code: '0A000' }), seen)).to.equal(false);
    expect(names.renewAfter(resultTypeChanged, seen)).to.equal(true);
    expect(names.renewAfter(resultTypeChanged, seen)).to.equal(true);
    expect(names.generation).to.equal(seen + 1);
    expect(names.nameOf('SELECT 1')).to.match(/^gpucap_1_/);
  });

  it('takes a lost statement and one the session has that pg does not know as stale', () => {
    expect(isStaleStatement(Object.assign(new Error('prepared statement "gpucap_0_ab" does not exist'), { code: '26000' }))).to.equal(true);
    expect(isStaleStatement(Object.assign(new Error('prepared statement "gpucap_0_ab" already exists'), { code: '42P05' }))).to.equal(true);
    expect(isStaleStatement(new Error('Connection terminated unexpectedly'))).to.equal(false);
    expect(isStaleStatement(null)).to.equal(false);
  });
});
