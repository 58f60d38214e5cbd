// Monthly partitions of workloads and workload_pods (src/store/postgres/partitions.ts) on a real
// server: a month is created on demand for any row (an odd submitted_at of 0 included), twice or by two
// replicas at once without error, while others read and write the tables; and dropped with its rows.
import { expect } from 'chai';
import pg from 'pg';
import { connectWriter } from '../../../src/store/postgres/connection.js';
import { ensurePartitions, listPartitions, monthStart, monthSuffix, nextMonthStart } from '../../../src/store/postgres/partitions.js';
import { freshDatabase, sharedPostgres, type TestDatabase } from '../../support/postgres-database.js';

const silent = { warn: () => undefined };

function workloadRow(id: string, submittedAt: number): [string, unknown[]] {
  return [
    `INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
       initiative_id, instance_type, gpu_count, submitted_at, is_managed, updated_at)
     VALUES ($1, 'org', 'local', 'ns', $1, 'Job', 'pending', 'alice', 'ini', 'a100', 1, $2, 0, 0)`,
    [id, submittedAt],
  ];
}

describe('PostgreSQL month arithmetic', () => {
  it('finds the UTC month of a time, its suffix and the next month, across a year end and before 1970', () => {
    expect(monthStart(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).to.equal(Date.UTC(2026, 11, 1));
    expect(nextMonthStart(Date.UTC(2026, 11, 5))).to.equal(Date.UTC(2027, 0, 1));
    expect(monthSuffix(0)).to.equal('197001');
    expect(monthSuffix(-1)).to.equal('196912');
    expect(monthSuffix(Date.UTC(2027, 0, 1))).to.equal('202701');
  });

  it('refuses a time that is not one', () => {
    expect(() => monthStart(Number.NaN)).to.throw('Cannot find the month of time NaN: it is not a valid epoch ms');
  });
});

describe('PostgreSQL monthly partitions', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  const clients: pg.Client[] = [];
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

  async function connect(): Promise<pg.Client> {
    const client = await connectWriter(db.url, { instanceId: 'test', logger: silent, clusterId: 'local' });
    clients.push(client);
    return client;
  }

  const partitionOf = async (client: pg.Client, table: string, key: string, id: string) =>
    (await client.query(`SELECT tableoid::regclass::text AS partition FROM ${table} WHERE ${key} = $1`, [id])).rows;

  it('creates the month of submitted_at = 0 (1970-01) on demand, and the row and its pod land there', async () => {
    const client = await connect();
    expect(await ensurePartitions(client, [0, 5_000])).to.deep.equal([0]);
    await client.query(...workloadRow('w-epoch', 0));
    await client.query("INSERT INTO workload_pods (pod_uid, workload_id, submitted_at, gpus) VALUES ('p-epoch', 'w-epoch', 0, 1)");
    expect(await partitionOf(client, 'workloads', 'workload_id', 'w-epoch')).to.deep.equal([{ partition: 'workloads_p197001' }]);
    expect(await partitionOf(client, 'workload_pods', 'pod_uid', 'p-epoch')).to.deep.equal([{ partition: 'workload_pods_p197001' }]);
  });

  it('a partition gets the parent\'s defaults, checks and indexes', async () => {
    const client = await connect();
    await ensurePartitions(client, [0]);
    await client.query(...workloadRow('w-1', 0));
    expect((await client.query("SELECT resource_version, open_gpus FROM workloads_p197001 WHERE workload_id = 'w-1'")).rows).to.deep.equal([{ resource_version: '', open_gpus: 0 }]);
    const bad = await client.query("UPDATE workloads SET status = 'lost' WHERE workload_id = 'w-1'").then(() => undefined, (e: unknown) => e);
    expect(bad).to.have.property('code', '23514');
    const { rows } = await client.query<{ n: number }>("SELECT count(*) AS n FROM pg_index WHERE indrelid = 'workloads_p197001'::regclass");
    const { rows: parent } = await client.query<{ n: number }>("SELECT count(*) AS n FROM pg_index WHERE indrelid = 'workloads'::regclass");
    expect(rows[0]?.n).to.equal(parent[0]?.n).and.to.equal(14);
  });

  it('refuses a row whose month has no partition: there is no DEFAULT partition', async () => {
    const client = await connect();
    const error = await client.query(...workloadRow('w-old', Date.UTC(1999, 0, 1))).then(() => undefined, (e: unknown) => e);
    expect(error).to.have.property('code', '23514');
    expect((error as Error).message).to.match(/no partition of relation "workloads" found for row/);
  });

  it('creates nothing for months that exist, and nothing twice', async () => {
    const client = await connect();
    const before = await listPartitions(client);
    expect(await ensurePartitions(client, [Date.now()])).to.deep.equal([]);
    expect(await ensurePartitions(client, [Date.UTC(2001, 1, 3), Date.UTC(2001, 1, 20)])).to.deep.equal([Date.UTC(2001, 1, 1)]);
    expect(await ensurePartitions(client, [Date.UTC(2001, 1, 3)])).to.deep.equal([]);
    expect((await listPartitions(client)).length).to.equal(before.length + 1);
  });

  it('asks the database nothing for months the caller already knows', async () => {
    const client = await connect();
    const known = new Set<number>();
    await ensurePartitions(client, [0], { known });
    expect([...known]).to.deep.equal([0]);
    await client.query('DROP TABLE workloads_p197001, workload_pods_p197001');
    // Known: not re-checked (a writer's cache lives as long as its session; only retention drops months).
    expect(await ensurePartitions(client, [0], { known })).to.deep.equal([]);
    expect(await ensurePartitions(client, [0])).to.deep.equal([0]);
  });

  it('lets two replicas create the same months at once: both succeed, each month once', async () => {
    const [first, second] = [await connect(), await connect()];
    const months = [Date.UTC(2003, 0, 1), Date.UTC(2003, 1, 1), Date.UTC(2003, 2, 1)];
    const [a, b] = await Promise.all([ensurePartitions(first, months), ensurePartitions(second, [...months].reverse())]);
    expect([...a, ...b].sort((x, y) => x - y)).to.deep.equal(months);
    const created = (await listPartitions(first)).filter((p) => p.month.startsWith('2003'));
    expect(created.map((p) => [p.month, p.workloads, p.pods])).to.deep.equal([['200301', true, true], ['200302', true, true], ['200303', true, true]]);
  });

  it('creates a month while another transaction reads and writes workloads, without waiting for it', async () => {
    const [busy, creator] = [await connect(), await connect()];
    await busy.query('BEGIN');
    await busy.query('SELECT count(*) FROM workloads');
    await busy.query(...workloadRow('w-busy', Date.now()));
    try {
      // CREATE TABLE … PARTITION OF would need ACCESS EXCLUSIVE on workloads and wait for `busy`
      // until its 5 s lock_timeout; LIKE then ATTACH needs only SHARE UPDATE EXCLUSIVE.
      await creator.query("SET lock_timeout = '1s'");
      expect(await ensurePartitions(creator, [Date.UTC(2010, 5, 1)])).to.deep.equal([Date.UTC(2010, 5, 1)]);
    } finally {
      await busy.query('ROLLBACK');
    }
  });

  it('attaches a table of the month left unattached, rather than failing on its name', async () => {
    const client = await connect();
    await client.query('CREATE TABLE workloads_p201101 (LIKE workloads INCLUDING DEFAULTS INCLUDING CONSTRAINTS)');
    expect(await ensurePartitions(client, [Date.UTC(2011, 0, 9)])).to.deep.equal([Date.UTC(2011, 0, 1)]);
    const month = (await listPartitions(client)).find((p) => p.month === '201101');
    expect(month).to.include({ workloads: true, pods: true, start: Date.UTC(2011, 0, 1), end: Date.UTC(2011, 1, 1) });
  });
});
