// The index backend the tests run the service on: GPUCAP_TEST_BACKEND=sqlite (the default) or
// postgres. The same API, store and informer suites run on both (npm test, npm run test:postgres);
// only the tests about SQLite's own internals are left out on PostgreSQL, each named in SQLITE_ONLY
// with the reason, and test/test-backend.test.ts keeps that list equal to the tests that use it.
import { join } from 'node:path';
import pg from 'pg';
import sinon from 'sinon';
import { ForwardingSeedWriter } from '../../src/store/ports.js';
import { WorkloadWriter } from '../../src/store/writes/workload-writer.js';
import { freshDatabase } from './postgres-database.js';
import { POSTGRES_INSTALL_HINT } from './postgres.js';

export type TestBackend = 'sqlite' | 'postgres';

function backendOf(value: string | undefined): TestBackend {
  if (value === undefined || value === '' || value === 'sqlite') return 'sqlite';
  if (value === 'postgres') return 'postgres';
  throw new Error(`Cannot choose the test backend: GPUCAP_TEST_BACKEND must be sqlite or postgres, not "${value}"`);
}

export const TEST_BACKEND: TestBackend = backendOf(process.env.GPUCAP_TEST_BACKEND);
// Once, as the suite loads, rather than in every test that starts a service.
if (TEST_BACKEND === 'postgres' && (process.env.PG_BIN ?? '') === '') {
  throw new Error(`Cannot run the suite on PostgreSQL: GPUCAP_TEST_BACKEND=postgres needs PG_BIN (${POSTGRES_INSTALL_HINT})`);
}

/**
 * The tests that only make sense on SQLite, by title, with the reason. A sqliteOnly test whose title
 * is not here fails to load: the list grows only on purpose, in this one place.
 */
export const SQLITE_ONLY: Readonly<Record<string, string>> = {
  // The SQLite file and engine: PostgreSQL's twins are in test/store/postgres/.
  'store/database': 'the SQLite file itself: its folder, WAL, user_version, corruption, read-only opening',
  'store SQL snapshot (SQLite)': 'SQLite\'s SQL texts byte for byte',
  'store/rollups (kept per batch by the writer, schema v4)': 'SQLite\'s rollups and their v2 to v4 migrations; PostgreSQL\'s: postgres/writes.test.ts',
  'lets other work run between its batches: reads on the event loop see the pass half done': 'SQLite\'s batches hold the thread; PostgreSQL\'s are round trips that never do',
  // EXPLAIN QUERY PLAN of SQLite's texts; PostgreSQL's plans: postgres/reads-plans.test.ts.
  'the list\'s SQLite query plans': 'EXPLAIN QUERY PLAN of SQLite\'s texts',
  'describe\'s SQLite query plan': 'EXPLAIN QUERY PLAN of SQLite\'s text',
  'the statistics\' and ranking\'s SQLite query plans': 'EXPLAIN QUERY PLAN of SQLite\'s texts',
  'the usage\'s SQLite query plans': 'EXPLAIN QUERY PLAN of SQLite\'s texts',
  // Read worker threads: PostgreSQL reads through its connection pool (outages: postgres/errors.test.ts).
  'read pool': 'read worker threads are SQLite\'s',
  'read pool faults': 'read worker threads are SQLite\'s',
  'service with read workers': 'read worker threads are SQLite\'s',
  'because the read workers cannot start closes the index it had opened': 'read worker threads are SQLite\'s',
  'write thread': 'the write worker thread is SQLite\'s; PostgreSQL writes over its connection',
  'index checkpointer': 'SQLite\'s write-ahead log; PostgreSQL checkpoints on its own',
  // Telemetry kept by the process (rings, lifetime totals held in memory between flushes) is SQLite's;
  // on PostgreSQL the writer shares buckets that every replica reads (postgres/gpu-summaries.test.ts,
  // summary-flusher.test.ts), and sampler-service.test.ts runs on both.
  'lifetime totals (job_lifetime)': 'LifetimeAccumulators over SqliteLifetimeStore; PostgreSQL adds each bucket to the totals in SQL',
  'because the clusters will not stop still writes the lifetime totals and closes the index and both ports': 'the lifetime totals held in memory until the stop; PostgreSQL writes them with each bucket',
  'because the sampler fails to stop still writes the lifetime totals it gathered': 'the lifetime totals held in memory until the stop; PostgreSQL writes them with each bucket',
};

function reasonFor(title: string): string {
  const reason = SQLITE_ONLY[title];
  if (reason === undefined) throw new Error(`Cannot mark "${title}" sqliteOnly: add it to SQLITE_ONLY in test/support/backend.ts with the reason`);
  return reason;
}

/**
 * Marks a suite or test as sqliteOnly, on either backend: the tests the PostgreSQL leg may leave
 * pending are exactly those under a mark (scripts/ci/pending-reporter.mjs names them, and
 * scripts/ci/pending-check.mjs fails CI on any other pending test).
 */
function marked<T extends Mocha.Suite | Mocha.Test | void>(runnable: T, reason: string): T {
  if (runnable !== undefined) Object.assign(runnable, { sqliteOnlyReason: reason });
  return runnable;
}

/** describe / it that run on SQLite and are reported pending, with their reason, on PostgreSQL. */
export const sqliteOnly = {
  describe(title: string, fn: (this: Mocha.Suite) => void): Mocha.Suite | void {
    const reason = reasonFor(title);
    return marked(TEST_BACKEND === 'sqlite' ? describe(title, fn) : describe.skip(`${title} (SQLite only: ${reason})`, fn), reason);
  },
  it(title: string, fn: Mocha.Func | Mocha.AsyncFunc): Mocha.Test {
    const reason = reasonFor(title);
    return marked(TEST_BACKEND === 'sqlite' ? it(title, fn) : it.skip(`${title} (SQLite only: ${reason})`, fn), reason);
  },
};

/** Where a test service keeps its index: the variables that say so, and how to remove it. */
export type TestIndexLocation = { remove(): Promise<void> } & (
  | { kind: 'sqlite'; path: string; env: { GPUCAP_DB_PATH: string } }
  | { kind: 'postgres'; url: string; env: { GPUCAP_DB_URL: string; GPUCAP_TELEMETRY_SUMMARY_SECONDS: string } }
);

/**
 * A new, empty index on the test backend: SQLite's file in `dir` (the service creates the folder),
 * or a migrated database on the process's shared PostgreSQL server, dropped by remove().
 */
export async function testIndexLocation(dir: string): Promise<TestIndexLocation> {
  if (TEST_BACKEND === 'sqlite') {
    const path = join(dir, 'index.db');
    return { kind: 'sqlite', path, env: { GPUCAP_DB_PATH: path }, remove: async () => undefined };
  }
  // PG_BIN is set (checked above), so the shared server starts and never asks to skip.
  const database = await freshDatabase(NEVER_SKIPS);
  // One-second telemetry buckets: a test sees the exporters' values about two seconds after a scrape
  // rather than after the minute ends, with the same code path.
  return { kind: 'postgres', url: database.url, env: { GPUCAP_DB_URL: database.url, GPUCAP_TELEMETRY_SUMMARY_SECONDS: '1' }, remove: () => database.drop() };
}

const NEVER_SKIPS = {
  skip(): never {
    throw new Error('Cannot skip: the test backend is PostgreSQL and PG_BIN is set');
  },
} as unknown as Mocha.Context;

/** The sessions on the database at `url` other than the one asking: a stopped service leaves none. */
export async function otherSessions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * Where the write methods of a watched cluster's writer live on the test backend (see failIndexWrites):
 * on SQLite, a service on an index file writes through its write worker (write_worker, default true),
 * whose thread forwards each write by name; on PostgreSQL, a cluster's session writes through the writer.
 */
export function clusterWriterPrototype(): object {
  return TEST_BACKEND === 'sqlite' ? ForwardingSeedWriter.prototype : WorkloadWriter.prototype;
}

/**
 * Makes every write of rows through `sink` (a writer, or clusterWriterPrototype()) reject, by the
 * method the indexer calls: upsertWorkloads, or writeWorkloads where the sink has it.
 */
export function failIndexWrites(sink: object, error = new Error('injected: the index cannot be written')): { readonly called: boolean; restore(): void } {
  const methods = sink as Record<'upsertWorkloads' | 'writeWorkloads', (...args: unknown[]) => Promise<unknown>>;
  const stubs = (['upsertWorkloads', 'writeWorkloads'] as const).filter((name) => typeof methods[name] === 'function').map((name) => sinon.stub(methods, name).rejects(error));
  return {
    get called() {
      return stubs.some((stub) => stub.called);
    },
    restore() {
      for (const stub of stubs) stub.restore();
    },
  };
}
