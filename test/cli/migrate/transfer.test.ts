// `gpucap migrate` (src/cli/migrate/) from a real SQLite file into a real PostgreSQL: a seeded history
// copied row for row and checked; a run cut after its second chunk and resumed; the checks catching a
// row changed by hand; a live writer refusing the copy; the delta of a cut-over; and the PostgreSQL
// read side answering like the SQLite store afterwards.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import pg from 'pg';
import sinon from 'sinon';
import { METRIC_NAMES } from '../../../src/domain/metrics.js';
import type { WorkloadFilter } from '../../../src/query/ports.js';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { postgresIndex } from '../../../src/store/postgres/read-index.js';
import { SqliteLifetimeStore } from '../../../src/store/sqlite/lifetime-store.js';
import { USAGE_ROLLUPS } from '../../../src/store/usage/usage-columns.js';
import { LATEST_VERSION, migrate as migrateSqlite, MIGRATIONS } from '../../../src/store/sqlite/migrations/migrate.js';
import { sqliteWriter } from '../../../src/store/sqlite/connection-ports.js';
import { checkIndex } from '../../../src/cli/migrate/check-index.js';
import { chunkWriter } from '../../../src/cli/migrate/chunk-writer.js';
import { migrateIndex, type MigrateIndexOptions } from '../../../src/cli/migrate/migrate-index.js';
import { SNAPSHOT_FILE } from '../../../src/cli/migrate/snapshot.js';
import { openSource, WORKLOAD_COLUMNS } from '../../../src/cli/migrate/source.js';
import type { Verification } from '../../../src/cli/migrate/verify-index.js';
import type { FleetHourRow } from '../../../src/domain/fleet-ledger.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { rejectionOf } from '../../support/rejection.js';
import { aWorkload } from '../../support/workload-builder.js';
import { history, T0, write } from '../../store/rollup-history.js';
import { inOrg, openTempStore, tempDir, type TempStore } from '../../store/temp-store.js';

const quiet = { warn: () => undefined };
const MINUTE = 60_000;
/** A clock that moves one minute at every reading, so that rows get distinct updated_at values. */
const ticking = (from: number) => {
  let now = from;
  return { now: () => (now += MINUTE) };
};

/** An SQLite index with a seeded history, lifetime totals and usage of some workloads, and one of no workload. */
async function seedSource(options: { count?: number; from?: number; shared?: boolean } = {}): Promise<TempStore> {
  const source = openTempStore({ clock: ticking(options.from ?? T0 - 30 * 24 * 60 * MINUTE) });
  const steps = history(11, options.count ?? 300);
  // Shares of a GPU (schema v12): MIG sevenths, time-sliced quarters, KAI halves.
  const shares = [1 / 7, 0.25, 0.5, 3 / 7];
  await write(source.store, options.shared !== true ? steps : steps.map((step, k) => ('pods' in step
    ? { pods: step.pods.map((pod, p) => ({ ...pod, share: pod.gpus * (shares[(k + p) % shares.length] as number) })) }
    : step)));
  // Capacity types (schema v15): spot, on-demand and unknown rows.
  source.db.prepare("UPDATE workloads SET capacity_type = CASE rowid % 3 WHEN 0 THEN 'spot' WHEN 1 THEN 'on-demand' END").run();
  const ids = (source.db.prepare('SELECT workload_id FROM workloads ORDER BY workload_id LIMIT 40').all() as { workload_id: string }[]).map((r) => r.workload_id);
  new SqliteLifetimeStore(source.db).saveLifetimes([
    ...ids.map((workloadId, i) => ({
      workloadId,
      totals: Object.fromEntries(METRIC_NAMES.slice(0, 1 + (i % METRIC_NAMES.length)).map((m, k) => [m, { count: 10 + i + k, sum: 0.1 * (i + 1) * (k + 3), min: 0.5, max: 99.25 + i, current: k === 0 ? null : 42.125 }])),
    })),
    { workloadId: 'no-such-workload', totals: { gpu_utilization: { count: 3, sum: 1.5, min: 0.5, max: 0.5, current: 0.5 } } },
  ]);
  new SqliteLifetimeStore(source.db).saveLifetimes(ids.slice(0, 30).map((workloadId, i) => {
    const seconds = 15 * (i + 1);
    return { workloadId, totals: {}, usage: { utilSeconds: seconds, utilWeighted: seconds * 100 * i, idleSeconds: i % 3 === 0 ? seconds : 0, powerSeconds: seconds, energyDj: seconds * 3000, gpuErrors: i % 7 === 0 ? 1 : 0 } };
  }));
  // 60 hours and 6 days of the fleet's history: more than a chunk, the keyset going from the hours to the days.
  await source.store.writeFleetLedger({ clusterId: 'gpu-east', expectedMark: null, to: FLEET_FROM + FLEET_HOURS * HOUR, hours: fleetHours(FLEET_FROM, FLEET_HOURS) });
  return source;
}

const HOUR = 60 * MINUTE;
/** The fleet's history of two nodes, one spot, the other of no model or capacity type, over `hours` hours from `from`, in shares of a GPU. */
function fleetHours(from: number, hours: number, scale = 1): FleetHourRow[] {
  return Array.from({ length: hours }, (_, h) => [
    { node: 'n1', gpuModel: 'NVIDIA-H100', capacityType: 'spot' as const, capacityMs: 8 * HOUR, unavailableMs: HOUR / 3, allocatedMs: (h % 5) * HOUR * 0.25 * scale, idleMs: HOUR / 7 },
    { node: 'n2', gpuModel: null, capacityType: null, capacityMs: 4 * HOUR, unavailableMs: 0, allocatedMs: HOUR / 7 * scale, idleMs: 0 },
  ].map((node) => ({ clusterId: 'gpu-east', organizationId: 'acme', hour: from + h * HOUR, instanceType: 'p5.48xlarge', ...node }))).flat();
}
const FLEET_FROM = T0 - 2 * 24 * HOUR + 6 * HOUR;
const FLEET_HOURS = 30;

const failedChecks = (v: Verification) => v.checks.filter((c) => !c.ok).map((c) => `${c.organization} ${c.check.trim()}`);

describe('gpucap migrate: SQLite into PostgreSQL', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let sql: pg.Client;
  let source: TempStore;
  let lines: string[];

  beforeEach(async function () {
    db = await freshDatabase(this);
    sql = new pg.Client({ connectionString: db.url, types: TYPES });
    await sql.connect();
    lines = [];
  });
  afterEach(async () => {
    sinon.restore();
    source?.close();
    await sql?.end();
    await db?.drop();
  });

  const options = (extra: Partial<MigrateIndexOptions> = {}): MigrateIndexOptions => ({
    from: source.path,
    to: db.url,
    snapshotDir: source.dir,
    resume: false,
    restart: false,
    force: false,
    chunkRows: 40,
    clock: { now: () => Date.now() },
    print: (line) => lines.push(line),
    logger: quiet,
    ...extra,
  });

  /** Every column of every row on both sides, in one order: the copy is exact, floats to the last bit. */
  async function expectRowsEqual(): Promise<void> {
    const order = 'ORDER BY workload_id';
    const sqliteRows = source.db.prepare(`SELECT ${WORKLOAD_COLUMNS.join(', ')} FROM workloads ${order}`).all();
    const postgresRows = (await sql.query(`SELECT ${WORKLOAD_COLUMNS.join(', ')} FROM workloads ${order}`)).rows;
    expect(postgresRows).to.deep.equal(sqliteRows);
    const pods = 'SELECT p.pod_uid, p.workload_id, w.submitted_at, p.gpus, p.started_at, p.finished_at FROM workload_pods p JOIN workloads w ON w.workload_id = p.workload_id ORDER BY p.pod_uid';
    expect((await sql.query(pods)).rows).to.deep.equal(source.db.prepare(pods).all());
    const lifetimes = `SELECT l.workload_id, l.metric, l.sample_count, l.sum, l.min, l.max, l.current FROM workload_gpu_lifetime l
      WHERE l.workload_id IN (SELECT workload_id FROM workloads) ORDER BY l.workload_id, l.metric`;
    expect((await sql.query(lifetimes)).rows).to.deep.equal(source.db.prepare(lifetimes).all());
    // Usage with the keys the target's rows gave it, and its rollup summed from them.
    const usage = 'SELECT * FROM workload_usage WHERE workload_id IN (SELECT workload_id FROM workloads) ORDER BY workload_id';
    expect((await sql.query(usage)).rows).to.deep.equal(source.db.prepare(usage).all());
    for (const { table, keys } of USAGE_ROLLUPS) {
      const rollup = `SELECT * FROM ${table} ORDER BY ${keys.join(', ')}`;
      expect((await sql.query(rollup)).rows, table).to.deep.equal(source.db.prepare(rollup).all());
    }
    for (const table of ['fleet_hours', 'fleet_days', 'fleet_marks']) {
      const rows = `SELECT * FROM ${table} ORDER BY 1, 2${table === 'fleet_marks' ? '' : ', 3, 4'}`;
      const copied = (await sql.query(rows)).rows;
      expect(copied, table).to.deep.equal(source.db.prepare(rows).all());
      expect(copied, table).to.not.be.empty;
    }
  }

  it('copies shares of a GPU as SQLite holds them, and every check matches', async () => {
    source = await seedSource({ shared: true });
    expect(source.db.prepare('SELECT COUNT(*) FROM workload_pods WHERE gpus <> CAST(gpus AS INTEGER)').pluck().get()).to.be.greaterThan(50);
    const result = await migrateIndex(options({ clock: { now: () => Date.now() } }));
    expect(failedChecks(result.verification)).to.deep.equal([]);
    await expectRowsEqual();
  });

  it('copies every workload, pod and lifetime total as SQLite holds them, rebuilds the rollups, and every check matches', async () => {
    source = await seedSource();
    const at = Date.now();
    const result = await migrateIndex(options({ clock: { now: () => at } }));

    expect(result.kind).to.equal('full');
    expect(failedChecks(result.verification)).to.deep.equal([]);
    await expectRowsEqual();
    const { rows: [lifetime] } = await sql.query('SELECT COUNT(*) AS n, MIN(last_minute) AS lo, MAX(last_minute) AS hi FROM workload_gpu_lifetime');
    expect(lifetime).to.deep.equal({ n: 120, lo: Math.floor(at / MINUTE) * MINUTE, hi: Math.floor(at / MINUTE) * MINUTE });
    expect(result.verification.orphanLifetimes).to.equal(1);
    const acme = result.verification.checks.filter((c) => c.organization === 'acme').map((c) => c.check.trim());
    expect(acme).to.include.members([
      'workloads', 'completed', 'running', 'GPU-ms at T', 'pods', 'pod GPUs (millionths)', 'lifetime totals', 'lifetime samples', 'fleet hours', 'fleet GPU-ms',
    ]);
    expect(result.verification.checks.filter((c) => c.organization === '(all)'), 'one per rollup table, usage\'s four included').to.have.length(11);
    expect(existsSync(join(source.dir, SNAPSHOT_FILE)), 'the snapshot is removed once done').to.equal(false);
    expect(lines.some((l) => /^workloads: 300 rows in [\d.]+ s, [\d,]+ rows\/s$/.test(l)), lines.join('\n')).to.equal(true);
  });

  it('answers list and stats on PostgreSQL as the SQLite store does after the migration', async () => {
    source = await seedSource();
    await migrateIndex(options());
    const pool = new pg.Pool({ connectionString: db.url, types: TYPES, max: 2 });
    try {
      const postgres = postgresIndex(pool);
      const filters: WorkloadFilter[] = [inOrg(), inOrg({ status: 'running' }), inOrg({ initiativeId: 'vision' }), inOrg({}, { organizationId: 'globex', initiatives: ['llm', 'audio'] })];
      for (const filter of filters) {
        const page = { limit: 25, after: null };
        expect(await postgres.list(filter, page), JSON.stringify(filter)).to.deep.equal(await source.index.list(filter, page));
        expect(await postgres.stats(filter, 'initiative_id', T0), JSON.stringify(filter)).to.deep.equal(await source.index.stats(filter, 'initiative_id', T0));
        expect(await postgres.stats(filter, null, T0 + 3_600_000), JSON.stringify(filter)).to.deep.equal(await source.index.stats(filter, null, T0 + 3_600_000));
      }
    } finally {
      await pool.end();
    }
  });

  it('resumes after a failure in the third chunk from the last chunk that committed, and keeps the snapshot meanwhile', async () => {
    source = await seedSource();
    const real = chunkWriter.workloads;
    const failing = sinon.stub(chunkWriter, 'workloads').callsFake(async (...args) => {
      if (failing.callCount === 3) throw new Error('injected: the connection broke');
      return real(...args);
    });

    const error = await rejectionOf(migrateIndex(options()));
    expect(error.message).to.equal('injected: the connection broke');
    const { rows: [copied] } = await sql.query("SELECT (SELECT COUNT(*) FROM workloads) AS n, (SELECT rows FROM gpucap_transfer WHERE phase = 'workloads') AS recorded");
    expect(copied).to.deep.equal({ n: 80, recorded: 80 });
    expect(existsSync(join(source.dir, SNAPSHOT_FILE)), 'the snapshot is kept for --resume').to.equal(true);

    failing.restore();
    const refused = await rejectionOf(migrateIndex(options()));
    expect(refused.message).to.match(/^A migration from this source stopped in phase "workloads" after 80 rows; pass --resume to continue it, or --restart to start over$/);

    const writes = sinon.spy(chunkWriter, 'workloads');
    const result = await migrateIndex(options({ resume: true }));
    expect(result.kind).to.equal('continued');
    expect(writes.getCalls().reduce((sum, call) => sum + call.args[1].length, 0), 'rows written by the resumed run').to.equal(220);
    expect(failedChecks(result.verification)).to.deep.equal([]);
    await expectRowsEqual();
    expect(lines).to.include('snapshot: reading ' + join(source.dir, SNAPSHOT_FILE) + ' again, left by the run this one resumes (300 workloads)');
    expect(lines).to.include('workloads: resuming after 80 rows copied by an earlier run');
  });

  it('--verify finds a workload changed by hand in the target: its organization\'s figures and the rollups', async () => {
    source = await seedSource();
    await migrateIndex(options());
    const { rows: [victim] } = await sql.query("SELECT workload_id FROM workloads WHERE organization_id = 'globex' AND status = 'completed' AND gpu_seconds_closed > 0 LIMIT 1");
    await sql.query("UPDATE workloads SET status = 'failed', gpu_seconds_closed = gpu_seconds_closed + 1 WHERE workload_id = $1", [victim.workload_id]);

    const verification = await checkIndex({ from: source.path, to: db.url, snapshotDir: source.dir, clock: { now: () => T0 }, print: () => undefined, logger: quiet });

    expect(verification.ok).to.equal(false);
    expect(failedChecks(verification)).to.deep.equal([
      'globex completed',
      'globex failed',
      'globex GPU-ms at T',
      'globex rollup: GPU-ms at T = workload_totals',
      '(all) rollup: workload_counts = recomputed',
      '(all) rollup: stats_daily_submitter = recomputed',
      '(all) rollup: stats_daily_instance_type = recomputed',
      '(all) rollup: workload_totals = recomputed',
      '(all) rollup: stats_daily_initiative = recomputed',
      '(all) rollup: stats_weekly_submitter = recomputed',
      // The edit leaves failure_reason NULL, so the row stays out of the failure reasons' rollup.
    ]);
    const gpu = verification.checks.find((c) => c.organization === 'globex' && c.check === 'GPU-ms at T');
    expect(BigInt(gpu?.found.replaceAll(',', '') ?? 0) - BigInt(gpu?.expected.replaceAll(',', '') ?? 0)).to.equal(1000n);
    expect(existsSync(join(source.dir, 'index.verify.db')), '--verify removes its snapshot').to.equal(false);
  });

  it('refuses while a writer of a source cluster heartbeats, copies with --force, and ignores a stale lease', async () => {
    source = await seedSource();
    await sql.query("INSERT INTO clusters (cluster_id) VALUES ('local'), ('elsewhere')");
    const lease = (cluster: string, age: string) =>
      sql.query(`INSERT INTO writer_leases (cluster_id, epoch, holder, holder_pid, acquired_at, heartbeat_at)
        VALUES ($1, 3, 'gpucap-7d9f-x2', 4242, now(), clock_timestamp() - $2::interval)
        ON CONFLICT (cluster_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, [cluster, age]);
    await lease('local', '3 seconds');
    await lease('elsewhere', '0 seconds');

    const refused = await rejectionOf(migrateIndex(options()));
    expect(refused.message).to.match(/^A replica on PostgreSQL is writing "local" by gpucap-7d9f-x2 \(heartbeat \d+ s ago\): .* or pass --force$/);
    expect((await sql.query('SELECT COUNT(*) AS n FROM workloads')).rows[0].n).to.equal(0);

    await lease('local', '10 minutes');
    expect((await migrateIndex(options())).verification.ok, 'a stale heartbeat is no writer').to.equal(true);

    await lease('local', '1 second');
    await sql.query('DELETE FROM gpucap_transfer');
    const forced = await migrateIndex(options({ force: true, restart: true }));
    expect(forced.verification.ok).to.equal(true);
    expect(lines.some((l) => l.startsWith('Warning: copying while a replica writes "local"'))).to.equal(true);
  });

  it('copies only what changed since a finished migration with --resume: new, updated, moved and deleted rows', async () => {
    source = await seedSource({ count: 240 });
    const first = await migrateIndex(options());
    expect(first.verification.ok).to.equal(true);

    // The service went on: a later history rewrites the same ids (new statuses, pods, submission
    // times in other months) and adds new ones; retention removes old finished rows.
    const later = sqliteWriter(source.db, { clock: ticking(T0 + 24 * 60 * MINUTE) });
    await write(later, history(12, 300).slice(0, 150));
    // The fleet went on too: its open hour grew, and more hours came.
    const mark = FLEET_FROM + FLEET_HOURS * HOUR;
    await later.writeFleetLedger({ clusterId: 'gpu-east', expectedMark: mark, to: mark + 5 * HOUR, hours: fleetHours(mark - HOUR, 6, 2) });
    expect(await later.deleteFinishedBatch(T0 - 5 * 24 * 60 * MINUTE, 20)).to.be.greaterThan(0);
    const ids = (rows: { workload_id: string }[]) => new Set(rows.map((r) => r.workload_id));
    const kept = ids(source.db.prepare('SELECT workload_id FROM workloads').all() as { workload_id: string }[]);
    const gone = [...ids((await sql.query('SELECT workload_id FROM workloads')).rows)].filter((id) => !kept.has(id));
    expect(gone).to.not.be.empty;

    const refused = await rejectionOf(migrateIndex(options()));
    expect(refused.message).to.match(/^The target holds a finished migration of an earlier state of this source \(240 workloads, .*\); pass --resume to copy what changed since/);

    const delta = await migrateIndex(options({ resume: true }));
    expect(delta.kind).to.equal('delta');
    expect(failedChecks(delta.verification)).to.deep.equal([]);
    await expectRowsEqual();
    const { rows } = await sql.query<{ phase: string; rows: number }>(
      "SELECT phase, rows FROM gpucap_transfer WHERE source_id = $1 AND phase IN ('workloads', 'prune') ORDER BY phase", [openSourceState(source).id]);
    const copied = Object.fromEntries(rows.map((r) => [r.phase, r.rows]));
    const changed = (source.db.prepare('SELECT COUNT(*) AS n FROM workloads WHERE updated_at > ?').get(T0) as { n: number }).n;
    expect(copied.workloads, 'the delta copies the changed rows, not all').to.be.lessThan(source.countRows()).and.to.be.at.least(changed);
    expect(copied.prune, 'rows deleted by retention since the first copy').to.equal(gone.length);
  });

  it('refuses to resume when the source changed under a stopped migration, and starts over with --restart', async () => {
    // Read the file itself: a snapshot kept for --resume would be read again, unchanged.
    source = await seedSource();
    const direct = (extra: Partial<MigrateIndexOptions> = {}) => options({ snapshotDir: null, ...extra });
    const real = chunkWriter.workloads;
    const failing = sinon.stub(chunkWriter, 'workloads').callsFake(async (...args) => {
      if (failing.callCount === 2) throw new Error('injected');
      return real(...args);
    });
    await rejectionOf(migrateIndex(direct()));
    failing.restore();
    await write(sqliteWriter(source.db, { clock: ticking(T0 + 60 * MINUTE) }), history(13, 5).slice(0, 3));

    const refused = await rejectionOf(migrateIndex(direct({ resume: true })));
    expect(refused.message).to.match(/^The source changed since the migration that stopped in phase "workloads" after 40 rows \(300 workloads, .*\), so it cannot be resumed; pass --restart to start over$/);

    const restarted = await migrateIndex(direct({ restart: true }));
    expect(restarted.kind).to.equal('full');
    expect(failedChecks(restarted.verification)).to.deep.equal([]);
    await expectRowsEqual();
    expect((await sql.query('SELECT COUNT(DISTINCT source_id) AS n FROM gpucap_transfer')).rows[0].n, 'the stopped run is forgotten').to.equal(1);
  });

  it('refuses a target that holds the source\'s clusters without a record of migrating them, and replaces them with --restart', async () => {
    source = await seedSource();
    await migrateIndex(options());
    await sql.query('DELETE FROM gpucap_transfer');
    await sql.query("UPDATE workloads SET name = 'written-by-a-replica' WHERE workload_id IN (SELECT workload_id FROM workloads LIMIT 5)");

    const refused = await rejectionOf(migrateIndex(options()));
    expect(refused.message).to.equal(
      'The target already holds workloads of cluster "local" that no earlier migration recorded (a replica on PostgreSQL wrote them, or the checkpoints were deleted); pass --restart to delete them and copy the source',
    );
    const restarted = await migrateIndex(options({ restart: true }));
    expect(restarted.verification.ok).to.equal(true);
    await expectRowsEqual();
  });

  it('reads the file itself with --no-snapshot, and only checks a finished migration run again', async () => {
    source = await seedSource();
    const first = await migrateIndex(options({ snapshotDir: null }));
    expect(first.verification.ok).to.equal(true);
    expect(existsSync(join(source.dir, SNAPSHOT_FILE))).to.equal(false);
    const again = await migrateIndex(options({ snapshotDir: null }));
    expect(again.kind).to.equal('finished');
    expect(again.verification.ok).to.equal(true);
  });
});

describe('gpucap migrate: the SQLite source', () => {
  it('refuses a file of an older schema, saying to run the service on it once', () => {
    const { dir, remove } = tempDir();
    try {
      const path = join(dir, 'old.db');
      const old = new BetterSqlite3(path);
      migrateSqlite(old, MIGRATIONS.filter((m) => m.version <= 3));
      old.close();
      expect(() => openSource(path)).to.throw(
        `Cannot read the SQLite index "${path}": Cannot read index database "${path}": its schema version 3 is not ${LATEST_VERSION}; open it once read-write (start the service) to migrate it. ` +
          'gpucap migrate copies files of the schema this release writes: run this release\'s service on the file once, then migrate',
      );
    } finally {
      remove();
    }
  });

  it('finds the months with submissions by seeks, and names its state by schema, newest change, rows and lifetime samples', async () => {
    const store = openTempStore({ clock: { now: () => T0 } });
    try {
      const at = (iso: string) => Date.parse(iso);
      await store.store.upsertWorkloads([
        aWorkload({ workloadId: 'a', organizationId: 'acme', submittedAt: at('2026-01-31T23:59:59.999Z') }),
        aWorkload({ workloadId: 'b', organizationId: 'acme', submittedAt: at('2026-03-01T00:00:00Z') }),
        aWorkload({ workloadId: 'c', organizationId: 'globex', submittedAt: at('2026-02-15T00:00:00Z') }),
        aWorkload({ workloadId: 'd', organizationId: 'globex', submittedAt: 0 }),
      ]);
      const index = openSource(store.path);
      try {
        expect(index.organizations()).to.deep.equal(['acme', 'globex']);
        expect(index.months().map((m) => new Date(m).toISOString().slice(0, 7))).to.deep.equal(['1970-01', '2026-01', '2026-02', '2026-03']);
        expect(index.state()).to.deep.equal({ schemaVersion: LATEST_VERSION, maxUpdatedAt: T0, workloads: 4, lifetimeSamples: 0, clusters: ['local'], id: `v${LATEST_VERSION}:${T0}:4:0` });
      } finally {
        index.close();
      }
    } finally {
      store.close();
    }
  });
});

function openSourceState(source: TempStore) {
  const index = openSource(source.path);
  try {
    return index.state();
  } finally {
    index.close();
  }
}
