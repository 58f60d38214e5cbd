import { rejectionOf } from '../../support/rejection.js';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { LATEST_VERSION, migrate, MIGRATIONS, schemaVersion, type Migration } from '../../../src/store/sqlite/migrations/migrate.js';
import { sqliteIndex, sqliteWriter } from '../../../src/store/sqlite/connection-ports.js';
import { systemClock } from '../../../src/domain/clock.js';
import { aWorkload } from '../../support/workload-builder.js';
import { tempDir } from '../temp-store.js';
import { sqliteOnly } from '../../support/backend.js';

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('Expected the call to throw');
}

sqliteOnly.describe('store/database', () => {
  let dir: string;
  let remove: () => void;

  beforeEach(() => {
    ({ dir, remove } = tempDir());
  });
  afterEach(() => remove());

  it('creates the parent folder and the whole schema in an empty file', () => {
    const path = join(dir, 'a', 'b', 'index.db');
    const db = openDatabase(path);
    try {
      expect(existsSync(path)).to.equal(true);
      expect(schemaVersion(db)).to.equal(LATEST_VERSION);
      const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).to.deep.equal([
        'fleet_days', 'fleet_hours', 'fleet_marks', 'service_secrets', 'stats_daily_failure_reason', 'stats_daily_initiative', 'stats_daily_instance_type', 'stats_daily_submitter', 'stats_daily_usage',
        'stats_daily_usage_initiative', 'stats_daily_usage_submitter', 'stats_weekly_submitter', 'stats_weekly_usage_submitter', 'workload_counts',
        'workload_gpu_lifetime', 'workload_pods', 'workload_totals', 'workload_usage', 'workloads',
      ]);
      const indexes = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_%'").pluck().all();
      expect(indexes).to.include.members([
        'workloads_org_submitted', 'workloads_org_status', 'workloads_running', 'workloads_completed', 'workload_pods_workload', 'workload_pods_finished',
        'workloads_unfinished_horizon', 'workloads_finished_gpu_hours', 'workloads_finished_open',
      ]);
      const triggers = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").pluck().all();
      // The lifetime and usage cascades, and usage's rollup (v6): since v4 the writer keeps the
      // workloads' rollups per batch, not triggers per row; usage, which changes once per flush,
      // keeps its own by triggers on its table.
      expect(triggers).to.deep.equal([
        // v11 recreated usage's over its four rollups.
        'workloads_lifetime_delete', 'workloads_usage_delete', 'workload_usage_added', 'workload_usage_changed', 'workload_usage_removed',
      ]);
    } finally {
      db.close();
    }
  });

  it('sets WAL, synchronous NORMAL, foreign keys and a busy timeout', () => {
    const db = openDatabase(join(dir, 'index.db'));
    try {
      expect(db.pragma('journal_mode', { simple: true })).to.equal('wal');
      expect(db.pragma('synchronous', { simple: true })).to.equal(1);
      expect(db.pragma('foreign_keys', { simple: true })).to.equal(1);
      expect(db.pragma('busy_timeout', { simple: true })).to.be.greaterThan(0);
      expect(db.pragma('cache_size', { simple: true })).to.be.lessThan(0);
    } finally {
      db.close();
    }
  });

  it('re-opens an up-to-date file without changing it', async () => {
    const path = join(dir, 'index.db');
    const first = openDatabase(path);
    await sqliteWriter(first, { clock: systemClock }).upsertWorkloads([aWorkload(), aWorkload()]);
    first.close();

    const second = openDatabase(path);
    try {
      expect(schemaVersion(second)).to.equal(LATEST_VERSION);
      expect(migrate(second)).to.equal(LATEST_VERSION);
      expect(second.prepare('SELECT COUNT(*) AS n FROM workloads').get()).to.deep.equal({ n: 2 });
    } finally {
      second.close();
    }
  });

  it('refuses a file whose schema is newer than this build', () => {
    const path = join(dir, 'index.db');
    const raw = new BetterSqlite3(path);
    raw.pragma(`user_version = ${LATEST_VERSION + 1}`);
    raw.close();

    const error = errorOf(() => openDatabase(path));
    expect(error.message).to.match(/schema version \d+ is newer than this build knows/);
    expect(error.message).to.include('db_path');
  });

  it('refuses a file that is not an SQLite database', () => {
    const path = join(dir, 'index.db');
    writeFileSync(path, 'organization_id,workload_id\n'.repeat(200));

    const error = errorOf(() => openDatabase(path));
    expect(error.message).to.include('is not an SQLite database');
    expect(error.message).to.include(path);
  });

  it('opens a current file read-only and refuses writes through it', async () => {
    const path = join(dir, 'index.db');
    openDatabase(path).close();
    const db = openDatabase(path, { readonly: true });
    try {
      expect(schemaVersion(db)).to.equal(LATEST_VERSION);
      expect((await rejectionOf(sqliteWriter(db, { clock: systemClock }).upsertWorkloads([aWorkload()]))).message).to.match(/readonly/i);
    } finally {
      db.close();
    }
  });

  it('refuses to open a missing file read-only', () => {
    expect(() => openDatabase(join(dir, 'missing.db'), { readonly: true })).to.throw();
  });

  it('gives a v14 file the capacity types of v15, as the last column of each table: none for the rows written before', async () => {
    const path = join(dir, 'v14.db');
    const old = new BetterSqlite3(path);
    migrate(old, MIGRATIONS.filter((m) => m.version <= 14));
    old.exec(`INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by, initiative_id,
        instance_type, gpu_count, submitted_at, is_managed, resource_version, updated_at)
      VALUES ('w-old', 'acme', 'local', 'ns', 'n', 'Job', 'pending', 'alice', 'llm', 'p5.48xlarge', 1, 1000, 0, '1', 1000);
      INSERT INTO fleet_hours VALUES ('acme', 0, 'local', 'n1', 'H100', 'p5.48xlarge', 1, 0, 0, 0);
      INSERT INTO fleet_days VALUES ('acme', 0, 'local', 'n1', 'H100', 'p5.48xlarge', 1, 0, 0, 0);`);
    old.close();

    const db = openDatabase(path);
    try {
      expect(schemaVersion(db)).to.equal(LATEST_VERSION);
      for (const table of ['workloads', 'fleet_hours', 'fleet_days']) {
        const columns = db.pragma(`table_info(${table})`) as { name: string; type: string; notnull: number; pk: number }[];
        expect(columns.at(-1), table).to.deep.include({ name: 'capacity_type', type: 'TEXT', notnull: 0, pk: 0 });
        expect(db.prepare(`SELECT capacity_type FROM ${table}`).pluck().all(), table).to.deep.equal([null]);
      }
      const index = sqliteIndex(db);
      expect(await index.get('w-old', 2000)).to.not.have.property('capacityType');
      await sqliteWriter(db, { clock: systemClock }).upsertWorkloads([aWorkload({ workloadId: 'w-new', capacityType: 'reserved' })]);
      expect(await index.get('w-new', 2000)).to.deep.include({ capacityType: 'reserved' });
      expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
    } finally {
      db.close();
    }
  });

  it('applies each migration in its own transaction and stops at a failing one', () => {
    const db = new BetterSqlite3(':memory:');
    const steps: Migration[] = [
      { version: 1, description: 'one', sql: 'CREATE TABLE a (x INTEGER);' },
      { version: 2, description: 'two, broken', sql: 'CREATE TABLE b (x INTEGER); INSERT INTO missing VALUES (1);' },
    ];
    try {
      expect(() => migrate(db, steps)).to.throw(/no such table: missing/);
      expect(schemaVersion(db)).to.equal(1);
      const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all();
      expect(tables).to.deep.equal(['a']);
    } finally {
      db.close();
    }
  });
});
