// Which PostgreSQL failures mean "unavailable for now" (src/store/postgres/errors.ts): the read side
// answers those with 503 and Retry-After, anything else with 500. First a table of the errors' shapes,
// then the real errors that a server, a pool and the network produce.
import { expect } from 'chai';
import pg from 'pg';
import { IndexBusyError } from '../../../src/query/ports.js';
import { asIndexBusy, isUnavailable } from '../../../src/store/postgres/errors.js';
import { freePort } from '../../support/free-port.js';
import { databaseUrl, freshDatabase, sharedPostgres, type TestDatabase } from '../../support/postgres-database.js';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('PostgreSQL error classification', () => {
  const unavailable: [string, unknown][] = [
    ['a connection exception (class 08)', withCode('08006')],
    ['a protocol violation (08P01)', withCode('08P01')],
    ['admin_shutdown (57P01)', withCode('57P01')],
    ['crash_shutdown (57P02)', withCode('57P02')],
    ['cannot_connect_now (57P03)', withCode('57P03')],
    ['too_many_connections (53300)', withCode('53300')],
    ['query_canceled by a statement timeout (57014)', withCode('57014')],
    ['lock_not_available by a lock timeout (55P03)', withCode('55P03')],
    ['serialization_failure (40001)', withCode('40001')],
    ['deadlock_detected (40P01)', withCode('40P01')],
    ...['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'].map((code): [string, unknown] => [code, withCode(code)]),
    ['"Connection terminated unexpectedly"', new Error('Connection terminated unexpectedly')],
    ['"Connection terminated due to connection timeout"', new Error('Connection terminated due to connection timeout')],
    ['"timeout exceeded when trying to connect"', new Error('timeout exceeded when trying to connect')],
    ['"Query read timeout"', new Error('Query read timeout')],
    ['an error caused by ECONNREFUSED', new Error('Cannot connect', { cause: withCode('ECONNREFUSED') })],
    ['an AggregateError of connects to several addresses', new AggregateError([withCode('ECONNREFUSED'), withCode('ENETUNREACH')], 'connect failed')],
  ];
  for (const [title, error] of unavailable) {
    it(`${title} is unavailable`, () => {
      expect(isUnavailable(error)).to.equal(true);
    });
  }

  const other: [string, unknown][] = [
    ['a syntax error (42601)', withCode('42601')],
    ['a unique violation (23505)', withCode('23505')],
    ['a check violation (23514)', withCode('23514')],
    ['an undefined table (42P01)', withCode('42P01')],
    ['a missing parameter of ours', new Error('Cannot bind SQL parameter @org: the values have no "org"')],
    ['a thrown string', 'ECONNREFUSED'],
    ['null', null],
  ];
  for (const [title, error] of other) {
    it(`${title} is not unavailable`, () => {
      expect(isUnavailable(error)).to.equal(false);
    });
  }

  it('the read side gets IndexBusyError for an unavailable database, with a message that names no server', () => {
    const busy = asIndexBusy(withCode('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.7:5432'), 3);
    expect(busy).to.be.instanceOf(IndexBusyError);
    expect(busy).to.include({ message: 'The index database is unavailable; retry shortly', retryAfterSeconds: 3 });
  });

  it('the read side gets any other error as it was', () => {
    const error = withCode('42601');
    expect(asIndexBusy(error)).to.equal(error);
  });
});

describe('PostgreSQL error classification of real failures', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  const clients: { end(): Promise<void> }[] = [];
  before(async function () {
    await sharedPostgres(this);
  });
  beforeEach(async function () {
    db = await freshDatabase(this);
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await db?.drop();
  });

  async function connect(config: pg.ClientConfig = {}): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: db.url, ...config });
    client.on('error', () => undefined); // the breaks below are on purpose
    await client.connect();
    clients.push(client);
    return client;
  }

  /** The error `work` fails with; fails the test when it does not. */
  async function failure(work: () => Promise<unknown>): Promise<unknown> {
    try {
      await work();
    } catch (error) {
      return error;
    }
    throw new Error('Expected a failure, but the work succeeded');
  }

  it('connecting to a port where nothing listens is unavailable', async () => {
    const url = new URL(db.url);
    url.port = String(await freePort());
    const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3_000 });
    const error = await failure(() => client.connect());
    expect(error).to.have.property('code', 'ECONNREFUSED');
    expect(isUnavailable(error)).to.equal(true);
  });

  it('a session ended by pg_terminate_backend is unavailable, and so is every later query on it', async () => {
    const client = await connect();
    const error = await failure(() => client.query('SELECT pg_terminate_backend(pg_backend_pid())'));
    expect(error).to.have.property('code', '57P01');
    expect(isUnavailable(error)).to.equal(true);
    const later = await failure(() => client.query('SELECT 1'));
    expect(isUnavailable(later), String(later)).to.equal(true);
  });

  it('a statement timeout is unavailable', async () => {
    const client = await connect();
    await client.query('SET statement_timeout = 50');
    const error = await failure(() => client.query('SELECT pg_sleep(2)'));
    expect(error).to.have.property('code', '57014');
    expect(isUnavailable(error)).to.equal(true);
  });

  it('a lock timeout is unavailable', async () => {
    const holder = await connect();
    const waiter = await connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE workload_totals IN ACCESS EXCLUSIVE MODE');
    await waiter.query('SET lock_timeout = 50');
    const error = await failure(() => waiter.query('SELECT count(*) FROM workload_totals'));
    await holder.query('ROLLBACK');
    expect(error).to.have.property('code', '55P03');
    expect(isUnavailable(error)).to.equal(true);
  });

  it('a query whose answer does not come within query_timeout is unavailable', async () => {
    const client = await connect({ query_timeout: 100 });
    const error = await failure(() => client.query('SELECT pg_sleep(2)'));
    expect(error).to.have.property('message', 'Query read timeout');
    expect(isUnavailable(error)).to.equal(true);
  });

  it('a pool with no connection to give in time is unavailable', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 100 });
    clients.push(pool);
    const held = await pool.connect();
    try {
      const error = await failure(() => pool.query('SELECT 1'));
      expect(error).to.have.property('message', 'timeout exceeded when trying to connect');
      expect(isUnavailable(error)).to.equal(true);
    } finally {
      held.release();
    }
  });

  it('a database that does not exist is not unavailable: waiting will not create it', async () => {
    const client = new pg.Client({ connectionString: databaseUrl(db.url, 'no_such_database') });
    const error = await failure(() => client.connect());
    expect(error).to.have.property('code', '3D000');
    expect(isUnavailable(error)).to.equal(false);
  });

  it('a syntax error is not unavailable', async () => {
    const client = await connect();
    const error = await failure(() => client.query('SELEC 1'));
    expect(error).to.have.property('code', '42601');
    expect(isUnavailable(error)).to.equal(false);
  });
});
