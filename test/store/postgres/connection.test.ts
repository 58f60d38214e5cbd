// The connections of the PostgreSQL backend (src/store/postgres/connection.ts), against a real server:
// the session settings a role runs with, how values come back, and a broken idle connection of the
// read pool that is logged instead of crashing the process.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { clientConfig, connectMaintenance, connectWriter, createReadPool, type ConnectionLogger } from '../../../src/store/postgres/connection.js';
import { freshDatabase, sharedPostgres, type TestDatabase } from '../../support/postgres-database.js';
import { waitFor } from '../../support/wait-for.js';

class RecordingLogger implements ConnectionLogger {
  readonly warnings: { fields: object; message: string }[] = [];
  warn(fields: object, message: string): void {
    this.warnings.push({ fields, message });
  }
}

describe('PostgreSQL connections', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let logger: RecordingLogger;
  const closers: (() => Promise<void>)[] = [];
  before(async function () {
    await sharedPostgres(this); // skips the whole suite, once, without PG_BIN
  });
  beforeEach(async function () {
    db = await freshDatabase(this);
    logger = new RecordingLogger();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await db?.drop();
  });

  async function writer(): Promise<pg.Client> {
    const client = await connectWriter(db.url, { instanceId: 'replica-1', logger, clusterId: 'east' });
    closers.push(() => client.end());
    return client;
  }

  it('a writer runs as gpucap:<instance>:writer:<cluster> with its timeouts and jit off', async () => {
    const client = await writer();
    const { rows: [row] } = await client.query(
      `SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS statement,
              current_setting('lock_timeout') AS lock, current_setting('idle_in_transaction_session_timeout') AS idle,
              current_setting('jit') AS jit, current_setting('tcp_user_timeout') AS tcp_user`,
    );
    expect(row).to.deep.equal({ app: 'gpucap:replica-1:writer:east', statement: '5s', lock: '5s', idle: '10s', jit: 'off', tcp_user: '10000' });
  });

  it('the read pool runs as gpucap:<instance>:reader with a longer statement timeout', async () => {
    const pool = createReadPool(db.url, { instanceId: 'replica-1', logger, size: 2 });
    closers.push(() => pool.end());
    const { rows: [row] } = await pool.query("SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS statement");
    expect(row).to.deep.equal({ app: 'gpucap:replica-1:reader', statement: '10s' });
  });

  it('a maintenance session has no statement or lock timeout', async () => {
    const client = await connectMaintenance(db.url, { instanceId: 'replica-1', logger });
    closers.push(() => client.end());
    const { rows: [row] } = await client.query("SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock");
    expect(row).to.deep.equal({ statement: '0', lock: '0' });
  });

  it('reads bigint and COUNT(*) as numbers, float8 as numbers, and bigint arrays as number arrays', async () => {
    const client = await writer();
    const { rows: [row] } = await client.query(
      'SELECT 1793491200000::bigint AS ms, count(*) AS n, 2.5::float8 AS f, ARRAY[1, NULL, 9007199254740991]::bigint[] AS list FROM generate_series(1, 3)',
    );
    expect(row).to.deep.equal({ ms: 1793491200000, n: 3, f: 2.5, list: [1, null, 9007199254740991] });
  });

  it('refuses a bigint beyond 2^53 rather than rounding it, and the connection stays usable', async () => {
    const client = await writer();
    let error: unknown;
    await client.query('SELECT 9007199254740993::bigint AS big').catch((e: unknown) => (error = e));
    expect((error as Error | undefined)?.message).to.equal('Cannot read bigint 9007199254740993 as a number: it is beyond 2^53');
    expect((await client.query('SELECT 1 AS one')).rows).to.deep.equal([{ one: 1 }]);
  });

  it('refuses a numeric value, which only a missing cast produces (SUM of a bigint)', async () => {
    const client = await writer();
    let error: unknown;
    await client.query('SELECT sum(x) AS s FROM (VALUES (1::bigint)) v(x)').catch((e: unknown) => (error = e));
    expect((error as Error | undefined)?.message).to.equal('Cannot read numeric value 1: cast it to float8 or bigint in the SQL');
    expect((await client.query('SELECT sum(x)::float8 AS s FROM (VALUES (1::bigint)) v(x)')).rows).to.deep.equal([{ s: 1 }]);
  });

  it('leaves the global pg.types alone: a client of its own still reads bigint as a string', async () => {
    await writer();
    const plain = new pg.Client({ connectionString: db.url });
    await plain.connect();
    closers.push(() => plain.end());
    expect((await plain.query('SELECT 5::bigint AS n')).rows).to.deep.equal([{ n: '5' }]);
  });

  it('logs an idle pool connection that the server ends, and the next read opens a new one', async () => {
    const pool = createReadPool(db.url, { instanceId: 'replica-1', logger, size: 1 });
    closers.push(() => pool.end());
    const { rows: [first] } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const killer = await writer();
    await killer.query('SELECT pg_terminate_backend($1)', [first?.pid]);
    await waitFor(() => logger.warnings.length > 0, { timeoutMs: 5_000, what: 'the pool to report its broken idle connection' });
    expect(logger.warnings[0]?.message).to.equal('An idle connection of the read pool broke; it is replaced on the next read');
    const { rows: [second] } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(second?.pid).to.be.a('number').and.not.equal(first?.pid);
  });
});

describe('PostgreSQL read pool, a connection checked out when the server ends it', function () {
  this.timeout(60_000);
  it('fails the read in progress and keeps the process alive; the next read opens a new connection', async function () {
    const db = await freshDatabase(this);
    const logger = new RecordingLogger();
    const pool = createReadPool(db.url, { instanceId: 'replica-1', logger, size: 1 });
    const killer = await connectWriter(db.url, { instanceId: 'replica-1', logger, clusterId: 'east' });
    try {
      const client = await pool.connect();
      const { rows: [held] } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Between two statements of a read's transaction: no query is waiting for an answer.
      await client.query('BEGIN');
      await killer.query('SELECT pg_terminate_backend($1)', [held?.pid]);
      // Without a listener on the checked-out client, its 'error' event would end the mocha process here.
      await sleep(500);
      expect(await client.query('SELECT 1').then(() => null, (error: unknown) => error)).to.be.instanceOf(Error);
      client.release(true);
      const { rows: [next] } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(next?.pid).to.be.a('number').and.not.equal(held?.pid);
    } finally {
      await killer.end();
      await pool.end();
      await db.drop();
    }
  });
});

describe('PostgreSQL connection settings', () => {
  it('keeps the URL\'s own options after its settings, and its own application_name out', () => {
    const config = clientConfig('postgres://u:p%40ss@db:5432/gpucap?sslmode=disable&options=-c%20work_mem%3D64MB&application_name=x', 'gpucap:r:reader', {
      statementTimeout: 1, lockTimeout: 2, idleInTransactionTimeout: 3, queryTimeout: 0,
    });
    expect(config.connectionString).to.equal('postgres://u:p%40ss@db:5432/gpucap?sslmode=disable');
    expect(config.application_name).to.equal('gpucap:r:reader');
    expect(config.options).to.match(/-c statement_timeout=1 -c lock_timeout=2 -c idle_in_transaction_session_timeout=3 -c work_mem=64MB$/);
    expect(config).not.to.have.property('query_timeout');
  });
});
