// The PostgreSQL writer of a cluster against a real server, judged by the SQLite store: the same
// seeded history written through both leaves the same rows, pod intervals and rollups (SQLite's
// rollups are checked against a recomputation in rollups.test.ts). Replaying it changes nothing, a
// fenced-out writer writes nothing, and the cluster's unfinished rows stay in step for reconcile.
import { expect } from 'chai';
import pg from 'pg';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { FencedOut, PostgresLeases, type LeaseSession } from '../../../src/store/postgres/lease.js';
import { poolWriter, sessionWriter, type SessionWrites } from '../../../src/store/postgres/writers.js';
import { ROLLUPS } from '../../../src/store/rollups/definitions.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { rejectionOf } from '../../support/rejection.js';
import { batches, history, T0, write, type Step } from '../rollup-history.js';
import { openTempStore, type TempStore } from '../temp-store.js';

type Session = SessionWrites & LeaseSession;
type Row = Record<string, unknown>;

const clock = { now: () => T0 };
const quiet = { warn: () => undefined };

/** Rows in a backend-neutral form: GPU aggregates as whole GPU-ms (their exact value), no write time. */
function neutral(rows: Row[]): Row[] {
  return rows.map(({ updated_at: _updated, gpu_seconds_closed, open_gpu_start_sum, ...row }) => ({
    ...row,
    closed_ms: Math.round(Number(gpu_seconds_closed) * 1000),
    open_start_ms: Math.round(Number(open_gpu_start_sum) * 1000),
  }));
}

/** The two ways a flush step reaches the writer: rows then intervals in two transactions, or both in one. */
const WRITE_MODES = [
  { name: 'rows, then intervals', write: (writer: SessionWrites, steps: readonly Step[]) => write(writer, steps) },
  {
    name: 'rows with their intervals',
    write: async (writer: SessionWrites, steps: readonly Step[]) => {
      for (const { workloads, pods } of batches(steps)) await writer.writeWorkloads(workloads, pods);
    },
  },
];

describe('store/postgres writer', function () {
  this.timeout(120_000);
  let db: TestDatabase | undefined;
  let sql: pg.Client | undefined;
  let lite: TempStore | undefined;
  const sessions: Session[] = [];

  const query = async (text: string, params: unknown[] = []): Promise<Row[]> => {
    if (sql === undefined) throw new Error('No test database');
    return (await sql.query(text, params)).rows as Row[];
  };
  const leases = (instanceId = 'pod-a') => {
    if (db === undefined) throw new Error('No test database');
    return new PostgresLeases(
      { url: db.url, instanceId, leaseSeconds: 10, logger: quiet, read: async (text, params) => ({ rows: await query(text, params) }) },
      (connection) => sessionWriter(connection, { clock }),
    );
  };
  const session = async (clusterId = 'local', instanceId = 'pod-a'): Promise<Session> => {
    const taken = await leases(instanceId).lease(clusterId).acquire();
    if (taken === null) throw new Error('The lock is held');
    sessions.push(taken);
    return taken;
  };
  const sqlite = (): TempStore => {
    lite ??= openTempStore({ clock });
    return lite;
  };

  /** Every row and pod has its key, naming its month, and no key names a row that is not there. */
  const expectKeysOfRows = async () => {
    expect(await query('SELECT workload_id, submitted_at FROM workload_keys ORDER BY 1'), 'workload_keys')
      .to.deep.equal(await query('SELECT workload_id, submitted_at FROM workloads ORDER BY 1'));
    expect(await query('SELECT pod_uid, submitted_at FROM pod_keys ORDER BY 1'), 'pod_keys')
      .to.deep.equal(await query('SELECT pod_uid, submitted_at FROM workload_pods ORDER BY 1'));
  };

  beforeEach(async function () {
    db = await freshDatabase(this);
    sql = new pg.Client({ connectionString: db.url, types: TYPES });
    await sql.connect();
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.release().catch(() => undefined)));
    await sql?.end();
    await db?.drop();
    lite?.close();
    lite = undefined;
  });

  for (const mode of WRITE_MODES) it(`leaves the rows, pods and rollups that SQLite leaves for the same history (${mode.name})`, async () => {
    const steps = history(7, 250);
    const writer = await session();
    await mode.write(writer, steps);
    await write(sqlite().store, steps);

    const columns = 'workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by, initiative_id, instance_type, gpu_count, submitted_at, started_at, completed_at, exit_code, is_managed, resource_version, gpu_seconds_closed, open_gpus, open_gpu_start_sum';
    const liteRows = sqlite().db.prepare(`SELECT ${columns} FROM workloads ORDER BY workload_id`).all() as Row[];
    expect(neutral(await query(`SELECT ${columns} FROM workloads ORDER BY workload_id`))).to.deep.equal(neutral(liteRows));
    const pods = 'SELECT pod_uid, workload_id, gpus, started_at, finished_at FROM workload_pods ORDER BY pod_uid';
    expect(await query(pods)).to.deep.equal(sqlite().db.prepare(pods).all());
    for (const { table, keys, values } of ROLLUPS) {
      const live = `SELECT ${[...keys, ...values].join(', ')} FROM ${table} WHERE ${values[0]} <> 0 ORDER BY ${keys.join(', ')}`;
      expect(await query(live), table).to.deep.equal(sqlite().db.prepare(live).all());
    }
    const months = await query("SELECT DISTINCT to_char(to_timestamp(submitted_at / 1000) AT TIME ZONE 'UTC', 'YYYYMM') AS month FROM workloads ORDER BY 1");
    expect(months, 'the history spans two months').to.have.length(2);
    await expectKeysOfRows();
  });

  it('deletes expired finished rows in batches as SQLite does, taking them out of the rollups', async () => {
    const steps = history(9, 200);
    const writer = await session();
    await write(writer, steps);
    await write(sqlite().store, steps);
    if (db === undefined) throw new Error('No test database');
    const pool = new pg.Pool({ connectionString: db.url, types: TYPES, max: 2 });
    try {
      const retention = poolWriter(pool, { clock });
      const cutoff = T0 - 5 * 86_400_000;
      const batches: number[] = [];
      for (let n = -1; n !== 0; ) batches.push((n = await retention.deleteFinishedBatch(cutoff, 17)));
      let sqliteDeleted = 0;
      for (let n = -1; n !== 0; ) sqliteDeleted += n = Math.max(0, await sqlite().store.deleteFinishedBatch(cutoff, 17));
      expect(batches.reduce((a, b) => a + b, 0)).to.equal(sqliteDeleted).and.be.greaterThan(17);
    } finally {
      await pool.end();
    }
    const ids = 'SELECT workload_id FROM workloads ORDER BY workload_id';
    expect(await query(ids)).to.deep.equal(sqlite().db.prepare(ids).all());
    const pods = 'SELECT pod_uid FROM workload_pods ORDER BY pod_uid';
    expect(await query(pods)).to.deep.equal(sqlite().db.prepare(pods).all());
    for (const { table, keys, values } of ROLLUPS) {
      const live = `SELECT ${[...keys, ...values].join(', ')} FROM ${table} WHERE ${values[0]} <> 0 ORDER BY ${keys.join(', ')}`;
      expect(await query(live), table).to.deep.equal(sqlite().db.prepare(live).all());
    }
    await expectKeysOfRows();
  });

  for (const mode of WRITE_MODES) it(`changes nothing when the same history is written again, as a new writer's resync does (${mode.name})`, async () => {
    const steps = history(11, 120);
    const writer = await session();
    await mode.write(writer, steps);
    const snapshot = async () => ({
      rows: await query('SELECT * FROM workloads ORDER BY workload_id'),
      // A replay moves rows through their earlier states and back: rollup rows emptied on the way stay, at 0.
      totals: await query('SELECT * FROM workload_totals WHERE workloads <> 0 ORDER BY 1, 2, 3, 4'),
      daily: await query('SELECT * FROM stats_daily_submitter WHERE workloads <> 0 ORDER BY 1, 2, 3, 4'),
    });
    const first = await snapshot();
    expect(first.rows).to.have.length(120);
    await mode.write(writer, steps);
    expect(await snapshot()).to.deep.equal(first);
  });

  it('keeps a finished row finished when an older event arrives, and its submission time when another replica saw it later', async () => {
    const writer = await session();
    const running: WorkloadRecord = {
      workloadId: 'w-1', organizationId: 'acme', clusterId: 'local', namespace: 'ns', name: 'train', kind: 'Job', status: 'running',
      submittedBy: 'alice', initiativeId: 'llm', instanceType: 'p5', gpuCount: 8, submittedAt: T0 - 3_600_000, startedAt: T0 - 3_000_000,
      completedAt: null, exitCode: null, failureReason: null, isManaged: false, resourceVersion: '5',
    };
    const done: WorkloadRecord = { ...running, status: 'completed', completedAt: T0 - 60_000, exitCode: 0, resourceVersion: '9' };
    await writer.upsertWorkloads([running]);
    await writer.upsertWorkloads([done]);
    expect(await writer.upsertWorkloads([{ ...running, resourceVersion: '6', submittedAt: T0 }])).to.equal(0);
    expect(await query('SELECT status, completed_at, exit_code, submitted_at FROM workloads')).to.deep.equal([
      { status: 'completed', completed_at: T0 - 60_000, exit_code: 0, submitted_at: T0 - 3_600_000 },
    ]);
    expect(writer.listUnfinished('local')).to.deep.equal([]);
  });

  it('keeps the cluster\'s pending and running rows for reconcile, loaded again by the next writer', async () => {
    const steps = history(3, 60);
    const first = await session();
    await write(first, steps);
    const unfinished = (await query("SELECT workload_id FROM workloads WHERE status IN ('pending', 'running') ORDER BY workload_id")).map((r) => r.workload_id);
    expect(unfinished.length).to.be.greaterThan(0);
    const ids = (records: WorkloadRecord[]) => records.map((r) => r.workloadId).sort();
    expect(ids(first.listUnfinished('local'))).to.deep.equal(unfinished);
    await first.release();
    const next = await session('local', 'pod-b');
    expect(ids(next.listUnfinished('local'))).to.deep.equal(unfinished);
    expect(next.listUnfinished('other')).to.deep.equal([]);
  });

  it('finds a pod that moves to a workload of another month, and a row whose key was left behind', async () => {
    const writer = await session();
    const october: WorkloadRecord = {
      workloadId: 'w-oct', organizationId: 'acme', clusterId: 'local', namespace: 'ns', name: 'a', kind: 'Job', status: 'running',
      submittedBy: 'alice', initiativeId: 'llm', instanceType: 'p5', gpuCount: 1, submittedAt: Date.UTC(2026, 9, 31, 23), startedAt: Date.UTC(2026, 9, 31, 23),
      completedAt: null, exitCode: null, failureReason: null, isManaged: false, resourceVersion: '1',
    };
    const november: WorkloadRecord = { ...october, workloadId: 'w-nov', name: 'b', submittedAt: T0 - 3_600_000, startedAt: T0 - 3_600_000 };
    await writer.upsertWorkloads([october, november]);
    const pod = { podUid: 'p-1', workloadId: 'w-oct', gpus: 1, startedAt: october.submittedAt, finishedAt: null };
    await writer.upsertPodIntervals([pod]);
    await writer.upsertPodIntervals([{ ...pod, workloadId: 'w-nov', startedAt: T0 - 3_000_000 }]);
    expect(await query('SELECT pod_uid, workload_id, submitted_at FROM workload_pods')).to.deep.equal([{ pod_uid: 'p-1', workload_id: 'w-nov', submitted_at: november.submittedAt }]);
    expect(await query('SELECT workload_id, open_gpus FROM workloads ORDER BY 1')).to.deep.equal([
      { workload_id: 'w-nov', open_gpus: 1 }, { workload_id: 'w-oct', open_gpus: 0 },
    ]);
    await expectKeysOfRows();

    // A key naming a month without its row (as a dropped month's keys would if left behind) finds
    // nothing: the row is written as new, and its key moves to the row's month.
    await query('UPDATE workload_keys SET submitted_at = $1 WHERE workload_id = $2', [Date.UTC(2026, 8, 15), 'w-nov']);
    await query("DELETE FROM workloads WHERE workload_id = 'w-nov'");
    expect(await query("SELECT submitted_at FROM workload_keys WHERE workload_id = 'w-nov'"), 'the delete matched no key').to.have.length(1);
    expect(await writer.upsertWorkloads([{ ...november, resourceVersion: '2' }])).to.equal(1);
    await expectKeysOfRows();
  });

  it('refuses to change a row\'s submitted_at in place, which would move it between partitions behind its key', async () => {
    const writer = await session();
    const [step] = history(5, 1);
    if (step === undefined || !('workloads' in step)) throw new Error('history starts with a workload');
    await writer.upsertWorkloads(step.workloads);
    const error = await rejectionOf(query('UPDATE workloads SET submitted_at = submitted_at - 86400000'));
    expect(String(error)).to.match(/Cannot move workloads_p\d{6} from submitted_at \d+ to \d+: submitted_at is the partition key/);
    await expectKeysOfRows();
  });

  it('refuses the writes of a writer fenced out by a newer epoch, and writes none of them', async () => {
    const writer = await session();
    const [step] = history(5, 1);
    if (step === undefined || !('workloads' in step)) throw new Error('history starts with a workload');
    await query('UPDATE writer_leases SET epoch = epoch + 1');
    expect(await rejectionOf(writer.upsertWorkloads(step.workloads))).to.be.instanceOf(FencedOut);
    expect(await query('SELECT count(*)::int AS n FROM workloads')).to.deep.equal([{ n: 0 }]);
  });
});
