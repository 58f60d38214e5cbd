// The PostgreSQL migrator (src/store/postgres/migrations/migrate.ts) against a real server: an empty database
// gets the whole schema and this month's partitions; a second run, or a second replica at the same
// moment, changes nothing; a newer schema is refused unless it stays compatible with this build.
import { expect } from 'chai';
import pg from 'pg';
import { openDatabase } from '../../../../src/store/sqlite/database.js';
import { migrate, schemaVersion } from '../../../../src/store/postgres/migrations/migrate.js';
import { LATEST_VERSION, MIGRATIONS, type Migration } from '../../../../src/store/postgres/migrations/schema.js';
import { listPartitions } from '../../../../src/store/postgres/partitions.js';
import { rollupFillSql, rollupRebuildSql } from '../../../../src/store/postgres/rollup-rebuild.js';
import { QUEUE_VALUES, ROLLUPS } from '../../../../src/store/rollups/definitions.js';
import { freshDatabase, sharedPostgres, type TestDatabase } from '../../../support/postgres-database.js';

const NOW = Date.UTC(2026, 10, 17, 12); // 2026-11-17
/** What the newest migration asks of the builds that run on it (v12: GPU shares, which older writers would sum into integers). */
const COMPATIBLE_SINCE = 12;
/** The rollups of the schemas before version 10 added the initiatives' (migrations/v10-initiative-rollups.ts) and 11 the submitters' weekly one (migrations/v11-weekly-submitter-rollups.ts). */
const rollupsBeforeV10 = ROLLUPS.filter((r) => r.table !== 'stats_daily_initiative' && r.table !== 'stats_weekly_submitter');

describe('PostgreSQL migrations', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  const clients: pg.Client[] = [];
  before(async function () {
    await sharedPostgres(this);
  });
  beforeEach(async function () {
    db = await freshDatabase(this, { migrated: false });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await db?.drop();
  });

  async function connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    clients.push(client);
    return client;
  }

  const tables = async (client: pg.Client) =>
    (await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE '%\\_p______' ORDER BY 1")).rows.map((r) => r.name);

  it('gives an empty database the whole schema, each version recorded', async () => {
    const client = await connect();
    expect(await migrate(client, { now: NOW })).to.deep.equal({ version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE });
    expect(await tables(client)).to.deep.equal([
      'clusters', 'fleet_days', 'fleet_hours', 'fleet_marks', 'pod_keys', 'schema_migrations', 'service_secrets', 'stats_daily_failure_reason', 'stats_daily_initiative', 'stats_daily_instance_type', 'stats_daily_submitter',
      'stats_daily_usage', 'stats_daily_usage_initiative', 'stats_daily_usage_submitter', 'stats_weekly_submitter', 'stats_weekly_usage_submitter', 'workload_counts', 'workload_gpu_buckets', 'workload_gpu_last_hour', 'workload_gpu_lifetime', 'workload_keys', 'workload_pods', 'workload_totals',
      'workload_usage', 'workloads', 'writer_leases',
    ]);
    const { rows: parents } = await client.query("SELECT relname FROM pg_class WHERE relkind = 'p' ORDER BY 1");
    expect(parents).to.deep.equal([{ relname: 'workload_pods' }, { relname: 'workloads' }]);
    const { rows } = await client.query('SELECT version, description, compatible_since FROM schema_migrations ORDER BY version');
    expect(rows).to.deep.equal(MIGRATIONS.map((m) => ({ version: m.version, description: m.description, compatible_since: m.compatibleSince })));
  });

  it('creates the partitions of this month and the next two, and no DEFAULT partition', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    const months = (await listPartitions(client)).map(({ month, start, workloads, pods }) => ({ month, start, workloads, pods }));
    expect(months).to.deep.equal([
      { month: '202611', start: Date.UTC(2026, 10, 1), workloads: true, pods: true },
      { month: '202612', start: Date.UTC(2026, 11, 1), workloads: true, pods: true },
      { month: '202701', start: Date.UTC(2027, 0, 1), workloads: true, pods: true },
    ]);
    const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_partitioned_table WHERE partdefid <> 0");
    expect(rows).to.deep.equal([{ n: 0 }]);
  });

  it('changes nothing when run again, and adds the partitions a later month needs', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    const before = await client.query("SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = 'public'::regnamespace");
    expect(await migrate(client, { now: NOW })).to.deep.equal({ version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE });
    const after = await client.query("SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = 'public'::regnamespace");
    expect(after.rows).to.deep.equal(before.rows);
    expect((await client.query('SELECT count(*)::int AS n FROM schema_migrations')).rows).to.deep.equal([{ n: MIGRATIONS.length }]);

    await migrate(client, { now: Date.UTC(2027, 0, 5) });
    expect((await listPartitions(client)).map((p) => p.month)).to.deep.equal(['202611', '202612', '202701', '202702', '202703']);
  });

  it('lets two replicas migrate at once: one applies each version, the other waits and finds it done', async () => {
    const [first, second] = [await connect(), await connect()];
    const results = await Promise.all([migrate(first, { now: NOW }), migrate(second, { now: NOW })]);
    expect(results).to.deep.equal([
      { version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE },
      { version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE },
    ]);
    expect((await first.query('SELECT version FROM schema_migrations ORDER BY version')).rows).to.deep.equal(MIGRATIONS.map((m) => ({ version: m.version })));
    expect((await listPartitions(first)).length).to.equal(3);
  });

  it('applies later migrations after the latest, each in order', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    const later: Migration[] = [
      ...MIGRATIONS,
      { version: LATEST_VERSION + 2, description: 'second', compatibleSince: 1, sql: 'ALTER TABLE probe ADD COLUMN b int' },
      { version: LATEST_VERSION + 1, description: 'first', compatibleSince: 1, sql: 'CREATE TABLE probe (a int)' },
    ];
    expect(await migrate(client, { now: NOW, migrations: later })).to.deep.equal({ version: LATEST_VERSION + 2, compatibleSince: 1 });
    const { rows } = await client.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'probe' ORDER BY 1");
    expect(rows).to.deep.equal([{ column_name: 'a' }, { column_name: 'b' }]);
  });

  it('gives the rows and pods written before version 3 their keys', async () => {
    const client = await connect();
    await migrate(client, { now: NOW, migrations: MIGRATIONS.filter((m) => m.version < 3) });
    await client.query(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, is_managed, updated_at)
      SELECT 'w-' || n, 'org', 'local', 'ns', 'n', 'Job', 'completed', 'alice', 'ini', 'a100', 1, $1::bigint + n * 86400000::bigint, 0, 0
      FROM generate_series(0, 40) AS n`, [Date.UTC(2026, 10, 1)]);
    await client.query("INSERT INTO workload_pods (pod_uid, workload_id, submitted_at, gpus) SELECT 'p-' || workload_id, workload_id, submitted_at, 1 FROM workloads");
    expect(await migrate(client, { now: NOW })).to.deep.equal({ version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE });
    const keys = await client.query('SELECT workload_id, submitted_at FROM workload_keys ORDER BY 1');
    expect(keys.rows).to.have.length(41).and.deep.equal((await client.query('SELECT workload_id, submitted_at FROM workloads ORDER BY 1')).rows);
    const pods = await client.query("SELECT pod_uid, submitted_at FROM pod_keys ORDER BY 1");
    expect(pods.rows).to.deep.equal((await client.query('SELECT pod_uid, submitted_at FROM workload_pods ORDER BY 1')).rows);
  });

  it('moves open GPUs to float8 at version 12, keeping every row\'s figures and rebuilding the indexes that read them', async () => {
    const client = await connect();
    await migrate(client, { now: NOW, migrations: MIGRATIONS.filter((m) => m.version < 12) });
    // Running rows with 1-3 open GPUs, finished ones without, over 20 days.
    await client.query(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, started_at, completed_at, is_managed, updated_at,
        gpu_seconds_closed, open_gpus, open_gpu_start_sum)
      SELECT 'w-' || n, 'org', 'local', 'ns', 'n', 'Job', CASE WHEN n % 2 = 0 THEN 'running' ELSE 'completed' END, 'alice', 'ini', 'a100', 3,
        $1::bigint + n * 86400000::bigint, $1::bigint + n * 86400000::bigint + 1000,
        CASE WHEN n % 2 = 1 THEN $1::bigint + n * 86400000::bigint + 3601000 END, 0, 0,
        CASE WHEN n % 2 = 1 THEN 3 * 3600.0 ELSE 0 END, CASE WHEN n % 2 = 0 THEN 1 + n % 3 ELSE 0 END,
        CASE WHEN n % 2 = 0 THEN (1 + n % 3) * ($1::bigint + n * 86400000::bigint + 1000) / 1000.0 ELSE 0 END
      FROM generate_series(0, 19) AS n`, [Date.UTC(2026, 10, 1)]);
    await client.query("INSERT INTO workload_pods (pod_uid, workload_id, submitted_at, gpus, started_at) SELECT 'p-' || workload_id, workload_id, submitted_at, 3, started_at FROM workloads");
    const figures = 'SELECT workload_id, gpu_seconds_closed, open_gpus, open_gpu_start_sum FROM workloads ORDER BY 1';
    const before = (await client.query(figures)).rows;
    const indexes = "SELECT indexname FROM pg_indexes WHERE tablename = 'workloads' ORDER BY 1";
    const indexesBefore = (await client.query(indexes)).rows;
    expect(await migrate(client, { now: NOW })).to.deep.equal({ version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE });
    expect((await client.query(figures)).rows).to.deep.equal(before);
    expect((await client.query(indexes)).rows).to.deep.equal(indexesBefore);
    const { rows: types } = await client.query(`SELECT table_name || '.' || column_name AS c, data_type FROM information_schema.columns
      WHERE (table_name, column_name) IN (('workloads', 'open_gpus'), ('workload_pods', 'gpus'), ('workload_totals', 'open_gpu_days'), ('workloads', 'allocated_gpus'))
      ORDER BY 1`);
    expect(types).to.deep.equal([
      { c: 'workload_pods.gpus', data_type: 'double precision' },
      { c: 'workload_totals.open_gpu_days', data_type: 'double precision' },
      { c: 'workloads.allocated_gpus', data_type: 'double precision' },
      { c: 'workloads.open_gpus', data_type: 'double precision' },
    ]);
  });

  it('adds the capacity types at version 15 without rewriting a row: NULL for the rows before, and in the partitions made after', async () => {
    const client = await connect();
    await migrate(client, { now: NOW, migrations: MIGRATIONS.filter((m) => m.version < 15) });
    await client.query(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, is_managed, updated_at)
      VALUES ('w-old', 'org', 'local', 'ns', 'n', 'Job', 'pending', 'alice', 'ini', 'a100', 1, $1, 0, 0)`, [Date.UTC(2026, 10, 2)]);
    for (const [table, grain] of [['fleet_hours', 'hour'], ['fleet_days', 'day']] as const) {
      await client.query(`INSERT INTO ${table} (organization_id, ${grain}, cluster_id, node, gpu_model, instance_type, capacity_ms, unavailable_ms, allocated_ms, idle_ms)
        VALUES ('org', 0, 'local', 'n1', 'H100', 'p5', 1, 0, 0, 0)`);
    }
    const files = "SELECT relname, relfilenode FROM pg_class WHERE relname IN ('workloads_p202611', 'fleet_hours', 'fleet_days') ORDER BY 1";
    const filesBefore = (await client.query(files)).rows;
    expect(await migrate(client, { now: NOW })).to.deep.equal({ version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE });
    expect((await client.query(files)).rows, 'no table rewritten').to.deep.equal(filesBefore);
    for (const table of ['workloads', 'fleet_hours', 'fleet_days']) {
      expect((await client.query(`SELECT capacity_type FROM ${table}`)).rows, table).to.deep.equal([{ capacity_type: null }]);
    }
    // A month whose partition is made after the migration (LIKE the parent) takes the column too.
    await migrate(client, { now: Date.UTC(2027, 1, 5) });
    await client.query(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, is_managed, updated_at, capacity_type)
      VALUES ('w-new', 'org', 'local', 'ns', 'n', 'Job', 'pending', 'alice', 'ini', 'a100', 1, $1, 0, 0, 'spot')`, [Date.UTC(2027, 2, 3)]);
    const { rows } = await client.query("SELECT tableoid::regclass::text AS part, capacity_type FROM workloads WHERE workload_id = 'w-new'");
    expect(rows).to.deep.equal([{ part: 'workloads_p202703', capacity_type: 'spot' }]);
  });

  it('fills the rollups\' queue figures of the rows written before version 7 (daily) and 8 (totals) as a rebuild from the rows does', async () => {
    const client = await connect();
    await migrate(client, { now: NOW, migrations: MIGRATIONS.filter((m) => m.version < 7) });
    // Waiting, started 7 s × n after the submission, and cancelled unstarted after 5 s, over 10 days.
    await client.query(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, started_at, completed_at, is_managed, updated_at, failure_reason)
      SELECT 'w-' || n, 'org', 'local', 'ns', 'n', 'Job', (ARRAY['pending', 'running', 'cancelled'])[n % 3 + 1], 'u' || (n % 4), 'ini', 'a100', 1,
        $1::bigint + n * 28800000::bigint,
        CASE WHEN n % 3 = 1 THEN $1::bigint + n * 28800000::bigint + n * 7000 END,
        CASE WHEN n % 3 = 2 THEN $1::bigint + n * 28800000::bigint + 5000 END,
        0, 0, CASE WHEN n % 3 = 2 THEN 'deleted' END
      FROM generate_series(0, 29) AS n`, [Date.UTC(2026, 10, 1, 3)]);
    // The rollups as a writer of version 6 kept them: without the queue columns.
    const queueColumns = [...QUEUE_VALUES, 'waiting_days'];
    for (const rollup of rollupsBeforeV10) await client.query(rollupFillSql({ ...rollup, values: rollup.values.filter((v) => !queueColumns.includes(v)) }));
    await migrate(client, { now: NOW });
    const daily = ['stats_daily_submitter', 'stats_daily_instance_type', 'stats_daily_failure_reason', 'workload_totals', 'stats_daily_initiative'];
    const contents = async () => {
      const tables = [];
      for (const table of daily) tables.push((await client.query(`SELECT * FROM ${table} WHERE workloads <> 0 ORDER BY 1, 2, 3, 4`)).rows);
      return tables;
    };
    const migrated = await contents();
    for (const sql of rollupRebuildSql()) await client.query(sql);
    expect(migrated).to.deep.equal(await contents());
    expect(migrated[1]?.reduce((n, row) => n + Number(row.waiting), 0), 'workloads waiting').to.equal(10);
    expect(migrated[3]?.reduce((n, row) => n + Number(row.waiting), 0), 'workloads waiting, in the totals').to.equal(10);
  });

  it('fills the daily rollups per initiative (version 10) and the weekly ones per submitter (version 11) from the rollups a version 9 writer kept, usage included, as a rebuild does', async () => {
    const client = await connect();
    await migrate(client, { now: NOW, migrations: MIGRATIONS.filter((m) => m.version < 10) });
    await client.query(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, started_at, completed_at, is_managed, updated_at, failure_reason)
      SELECT 'w-' || n, 'org', 'local', 'ns', 'n', 'Job', (ARRAY['running', 'completed', 'failed'])[n % 3 + 1], 'u' || (n % 4), 'team-' || (n % 3),
        (ARRAY['a100', 'h100'])[n % 2 + 1], 1 + n % 4, $1::bigint + n * 14400000::bigint, $1::bigint + n * 14400000::bigint + 60000,
        CASE WHEN n % 3 > 0 THEN $1::bigint + n * 14400000::bigint + 3600000 END, 0, 0, CASE WHEN n % 3 = 2 THEN 'oom_killed' END
      FROM generate_series(0, 59) AS n`, [Date.UTC(2026, 10, 1, 3)]);
    await client.query(`INSERT INTO workload_usage (workload_id, util_seconds, util_weighted, idle_seconds, power_seconds, energy_dj, gpu_errors)
      SELECT workload_id, 60 * gpu_count, 3000 * gpu_count, 10 * (gpu_count % 2), 60, 7000 + gpu_count, 0 FROM workloads`);
    // What a writer of version 9 kept: every rollup of its schema, usage's at the rows' keys.
    for (const sql of rollupRebuildSql().filter((sql) => !/stats_daily_(usage_)?initiative|stats_weekly_/.test(sql))) await client.query(sql);
    await migrate(client, { now: NOW });
    const contents = async () => [
      (await client.query('SELECT * FROM stats_daily_initiative WHERE workloads <> 0 ORDER BY 1, 2, 3')).rows,
      (await client.query('SELECT * FROM stats_daily_usage_initiative WHERE util_seconds <> 0 OR power_seconds <> 0 ORDER BY 1, 2, 3')).rows,
      (await client.query('SELECT * FROM stats_weekly_submitter WHERE workloads <> 0 ORDER BY 1, 2, 3, 4')).rows,
      (await client.query('SELECT * FROM stats_weekly_usage_submitter WHERE util_seconds <> 0 OR power_seconds <> 0 ORDER BY 1, 2, 3, 4')).rows,
    ];
    const migrated = await contents();
    expect(migrated[0], 'workloads').to.have.length(30);
    expect(migrated[1], 'usage').to.have.length(30);
    // 10 days from a Sunday, 6 rows a day over 12 (team, user) pairs: 3 weeks of 6, 12 and 12 pairs.
    expect(migrated[2], 'weekly workloads').to.have.length(30);
    expect(migrated[3], 'weekly usage').to.have.length(30);
    expect(migrated[2]?.some((row) => Number(row.open_started) > 0), 'open rows, whose figures move to the Monday').to.equal(true);
    for (const sql of rollupRebuildSql()) await client.query(sql);
    expect(migrated).to.deep.equal(await contents());
  });

  it('leaves nothing of a migration that fails half-way, and records no version for it', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    const broken: Migration[] = [...MIGRATIONS, { version: LATEST_VERSION + 1, description: 'broken', compatibleSince: 1, sql: 'CREATE TABLE half (a int); SELECT no_such_function()' }];
    const error = await migrate(client, { now: NOW, migrations: broken }).then(() => undefined, (e: unknown) => e);
    expect(error).to.have.property('code', '42883');
    expect((await client.query("SELECT to_regclass('half') IS NULL AS gone")).rows).to.deep.equal([{ gone: true }]);
    expect(await schemaVersion(client)).to.deep.equal({ version: LATEST_VERSION, compatibleSince: COMPATIBLE_SINCE });
  });

  it('refuses a database whose newer schema needs a newer build, naming both versions', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    const future = LATEST_VERSION + 1;
    await client.query("INSERT INTO schema_migrations (version, description, compatible_since) VALUES ($1, 'from the future', $1)", [future]);
    const error = await migrate(client, { now: NOW }).then(() => undefined, (e: unknown) => e);
    expect((error as Error | undefined)?.message).to.equal(
      `Cannot use index database "${db.name}": its schema version ${future} is newer than this build knows (${LATEST_VERSION}) ` +
        `and needs a build of schema version ${future} or newer; run a newer gpu-capacity-api or point db_url (GPUCAP_DB_URL) at another database`,
    );
  });

  it('runs on a newer schema that a rolling upgrade kept compatible with this build', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    await client.query(`INSERT INTO schema_migrations (version, description, compatible_since) VALUES (${LATEST_VERSION + 1}, 'adds only', ${LATEST_VERSION})`);
    expect(await migrate(client, { now: NOW })).to.deep.equal({ version: LATEST_VERSION + 1, compatibleSince: LATEST_VERSION });
  });

  it('reads version 0 from an empty database', async () => {
    expect(await schemaVersion(await connect())).to.deep.equal({ version: 0, compatibleSince: 0 });
  });

  it('has SQLite\'s columns in workloads, in each rollup table and in the fleet\'s history (plus the pods\' submitted_at)', async () => {
    const client = await connect();
    await migrate(client, { now: NOW });
    const sqlite = openDatabase(':memory:');
    try {
      for (const table of ['workloads', 'workload_pods', 'workload_gpu_lifetime', 'workload_counts', 'workload_totals', 'stats_daily_submitter', 'stats_daily_instance_type', 'stats_daily_failure_reason', 'fleet_hours', 'fleet_days']) {
        const { rows } = await client.query<{ name: string }>('SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [table]);
        const expected = (sqlite.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
        if (table === 'workload_pods') expected.splice(2, 0, 'submitted_at');
        if (table === 'workload_gpu_lifetime') expected.push('last_minute');
        expect(rows.map((r) => r.name), table).to.deep.equal(expected);
      }
    } finally {
      sqlite.close();
    }
  });
});
