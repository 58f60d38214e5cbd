// The PostgreSQL that the backend and fault tests run against (scripts/postgres/): a private server on
// loopback that the `pg` client reaches, that keeps its data across a clean or a crash restart on the
// same URL, and of which two run side by side without sharing anything.
import { expect } from 'chai';
import pg from 'pg';
import { startPostgresOrSkip, type PostgresServer } from '../../support/postgres.js';

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe('PostgreSQL test server (scripts/postgres)', function () {
  this.timeout(120_000);
  let server: PostgresServer;
  before(async function () {
    server = await startPostgresOrSkip(this);
  });
  after(() => server?.stop());

  it('answers on loopback, in the gpucap database, with Debian\'s PostgreSQL 15 or newer', async () => {
    expect(server.url).to.match(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/gpucap$/);
    const [row] = await query<{ db: string; version: string }>(server.url, "SELECT current_database() AS db, current_setting('server_version_num') AS version");
    expect(row?.db).to.equal('gpucap');
    expect(Number(row?.version)).to.be.at.least(150000);
  });

  it('keeps its data across a clean restart and across a crash (immediate stop), on the same URL', async () => {
    await query(server.url, 'CREATE TABLE restart_probe (id integer PRIMARY KEY, note text NOT NULL)');
    await query(server.url, 'INSERT INTO restart_probe VALUES ($1, $2)', [1, 'before the clean restart']);
    await server.stopServer('fast');
    let refused: unknown;
    await query(server.url, 'SELECT 1').catch((error: unknown) => (refused = error));
    expect((refused as NodeJS.ErrnoException | undefined)?.code, 'nothing listens while it is stopped').to.equal('ECONNREFUSED');
    await server.startServer();
    await query(server.url, 'INSERT INTO restart_probe VALUES ($1, $2)', [2, 'before the crash']);
    await server.stopServer('immediate');
    await server.startServer();
    const rows = await query<{ id: number; note: string }>(server.url, 'SELECT id, note FROM restart_probe ORDER BY id');
    expect(rows).to.deep.equal([
      { id: 1, note: 'before the clean restart' },
      { id: 2, note: 'before the crash' },
    ]);
  });

  it('runs a second server beside the first, on its own port and with its own data', async () => {
    const second = await startPostgresOrSkip(this as unknown as Mocha.Context);
    try {
      expect(second.url).to.not.equal(server.url);
      const tables = await query<{ name: string }>(second.url, "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
      expect(tables).to.deep.equal([]);
    } finally {
      await second.stop();
    }
  });
});
