// The rollup rebuild of PostgreSQL (src/store/postgres/rollup-rebuild.ts) against the rollups that the
// writer keeps per batch (src/store/rollups/ deltas, src/store/writes/workload-writer.ts): after a
// seeded history of writes and retention deletes, recomputing every table from the rows must give what
// the deltas added up to, to the last bit. The rebuild seeds the read tests (postgres-reads-seed.ts);
// this shows it is the writer's twin.
import { expect } from 'chai';
import pg from 'pg';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { PostgresLeases } from '../../../src/store/postgres/lease.js';
import { rebuildRollups } from '../../../src/store/postgres/rollup-rebuild.js';
import { poolWriter, sessionWriter } from '../../../src/store/postgres/writers.js';
import { ROLLUPS } from '../../../src/store/rollups/definitions.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { history, T0, write } from '../rollup-history.js';

const clock = { now: () => T0 };
const quiet = { warn: () => undefined };

describe('PostgreSQL rollup rebuild', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let sql: pg.Client;

  beforeEach(async function () {
    db = await freshDatabase(this);
    sql = new pg.Client({ connectionString: db.url, types: TYPES });
    await sql.connect();
  });
  afterEach(async () => {
    await sql?.end();
    await db?.drop();
  });

  /** Every rollup row with workloads in it (a writer leaves emptied rows at 0; a rebuild has none). */
  async function rollups(): Promise<Record<string, unknown[]>> {
    const contents: Record<string, unknown[]> = {};
    for (const { table, keys, values } of ROLLUPS) {
      const { rows } = await sql.query(`SELECT ${[...keys, ...values].join(', ')} FROM ${table} WHERE ${values[0]} <> 0 ORDER BY ${keys.join(', ')}`);
      contents[table] = rows;
    }
    return contents;
  }

  it('recomputes from the rows what the writer\'s deltas added up, through writes and retention deletes', async () => {
    const leases = new PostgresLeases(
      { url: db.url, instanceId: 'pod-a', leaseSeconds: 10, logger: quiet, read: async (text, params) => ({ rows: (await sql.query(text, params)).rows }) },
      (connection) => sessionWriter(connection, { clock }),
    );
    const writer = await leases.lease('local').acquire();
    if (writer === null) throw new Error('The lock is held');
    try {
      await write(writer, history(5, 300));
      const pool = new pg.Pool({ connectionString: db.url, types: TYPES, max: 1 });
      try {
        const retention = poolWriter(pool, { clock });
        while ((await retention.deleteFinishedBatch(T0 - 6 * 86_400_000, 25)) > 0);
      } finally {
        await pool.end();
      }
    } finally {
      await writer.release();
    }
    const kept = await rollups();
    expect(Object.values(kept).every((rows) => rows.length > 0)).to.equal(true);
    await rebuildRollups(sql);
    expect(await rollups()).to.deep.equal(kept);
    // Nothing at 0 is left behind: every row holds workloads.
    const { rows } = await sql.query('SELECT count(*)::int AS n FROM workload_totals WHERE workloads = 0');
    expect(rows).to.deep.equal([{ n: 0 }]);
  });

  it('empties the rollups of an index without rows', async () => {
    await sql.query("INSERT INTO workload_totals VALUES ('acme', 'llm', 'completed', 'p5', 1, 0, 0, 1000)");
    await rebuildRollups(sql);
    expect(await rollups()).to.deep.equal(Object.fromEntries(ROLLUPS.map((r) => [r.table, []])));
  });
});
