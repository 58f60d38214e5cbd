// A fresh index on the test backend for one run of a property test: the writes of cluster `local`'s
// writer and of retention, the rollups as the writer kept them, and the same rollups recomputed from
// the rows. SQLite: a file in memory, recomputed by migration v3's backfill over a copy of the rows
// (rollup-history.ts). PostgreSQL: a database copied from the migrated template, recomputed by the
// rebuild of `gpucap migrate` (rollup-rebuild.ts) in a transaction that is rolled back. And the raw
// rows, from which rollup-oracle.ts works the rollups' answers out without the product's code.
import pg from 'pg';
import type { Clock } from '../../src/domain/clock.js';
import { TYPES } from '../../src/store/postgres/connection.js';
import { PostgresLeases } from '../../src/store/postgres/lease.js';
import { PostgresGpuSummaries } from '../../src/store/postgres/gpu-summaries.js';
import { rollupRebuildSql } from '../../src/store/postgres/rollup-rebuild.js';
import { poolWriter, sessionWriter } from '../../src/store/postgres/writers.js';
import { ROLLUPS } from '../../src/store/rollups/definitions.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { executorOf, sqliteWriter } from '../../src/store/sqlite/connection-ports.js';
import { lifetimeSaves, SqliteLifetimeStore } from '../../src/store/sqlite/lifetime-store.js';
import type { GpuUsage } from '../../src/domain/gpu-usage.js';
import { TEST_BACKEND } from '../support/backend.js';
import { freshDatabase } from '../support/postgres-database.js';
import { expect } from 'chai';
import { RAW_POD_COLUMNS, RAW_WORKLOAD_COLUMNS, type RawPod, type RawRows, type RawWorkload } from './rollup-oracle.js';
import { recomputedRollups, rollupContents, T0 } from './rollup-history.js';
import { usageState, type UsageState } from './usage-contents.js';
import type { CommandTarget } from './write-commands.js';

export interface PropertyIndex {
  target: CommandTarget;
  /** The workload a pod belongs to, if the pod is stored. */
  podOwner(podUid: string): Promise<string | undefined>;
  /** The rollups' rows that hold workloads (those that hold none must be 0 throughout). */
  rollups(): Promise<Record<string, unknown[]>>;
  /** The same, recomputed from the rows. */
  recomputed(): Promise<Record<string, unknown[]>>;
  /** The workloads and pods as stored, for the rollups' oracle (rollup-oracle.ts). */
  raw(): Promise<RawRows>;
  /** The usage rollup, its recomputation, and the usage invariants (usage-contents.ts). */
  usage(): Promise<UsageState>;
  close(): Promise<void>;
}

export async function openPropertyIndex(context: Mocha.Context, clock: Clock): Promise<PropertyIndex> {
  return TEST_BACKEND === 'sqlite' ? openSqlite(clock) : openPostgres(context, clock);
}

function openSqlite(clock: Clock): PropertyIndex {
  const db = openDatabase(':memory:');
  const owner = db.prepare('SELECT workload_id FROM workload_pods WHERE pod_uid = ?').pluck();
  const store = sqliteWriter(db, { clock });
  const saveLifetimes = lifetimeSaves(new SqliteLifetimeStore(db), { executor: executorOf(db), writer: store });
  const target: CommandTarget = Object.assign(store, {
    saveUsage: async (workloadId: string, usage: GpuUsage) => {
      await saveLifetimes([{ workloadId, totals: {}, usage }]);
      return 1;
    },
  });
  return {
    target,
    podOwner: async (podUid) => owner.get(podUid) as string | undefined,
    rollups: async () => rollupContents(db),
    recomputed: async () => recomputedRollups(db),
    raw: async () => ({
      workloads: db.prepare(`SELECT ${RAW_WORKLOAD_COLUMNS} FROM workloads`).all() as RawWorkload[],
      pods: db.prepare(`SELECT ${RAW_POD_COLUMNS} FROM workload_pods`).all() as RawPod[],
    }),
    usage: () => usageState(async (sql) => db.prepare(sql).all() as Record<string, unknown>[], (c) => `(${c} / 86400000 - (${c} % 86400000 < 0))`),
    close: async () => void db.close(),
  };
}

const quiet = { warn: () => undefined };

async function openPostgres(context: Mocha.Context, clock: Clock): Promise<PropertyIndex> {
  const database = await freshDatabase(context);
  const sql = new pg.Client({ connectionString: database.url, types: TYPES });
  sql.on('error', (e) => console.error('SQLERR', e.message));
  const pool = new pg.Pool({ connectionString: database.url, types: TYPES, max: 1 });
  // pool.end() resolves once it has asked its connections to end, before they have: the drop that
  // follows may terminate one, and a client without a listener would throw that at the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const closing: (() => Promise<unknown>)[] = [() => database.drop(), () => pool.end()];
  const close = async () => {
    for (const step of closing.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    await sql.connect();
    closing.push(() => sql.end());
    const leases = new PostgresLeases(
      { url: database.url, instanceId: 'property', leaseSeconds: 10, logger: quiet, read: async (text, params) => ({ rows: (await sql.query(text, params)).rows }) },
      (connection) => sessionWriter(connection, { clock }),
    );
    const writer = await leases.lease('local').acquire();
    if (writer === null) throw new Error('Cannot write cluster local: its lock is held');
    closing.push(() => writer.release());
    const retention = poolWriter(pool, { clock });
    const summaries = new PostgresGpuSummaries({ primary: pool, readers: pool, clock });
    let bucketAt = T0;
    const contents = async () => {
      const tables: Record<string, unknown[]> = {};
      for (const { table, keys, values } of ROLLUPS) {
        const count = values[0] as string;
        const { rows } = await sql.query<Record<string, unknown>>(`SELECT ${[...keys, ...values].join(', ')} FROM ${table} ORDER BY ${keys.join(', ')}`);
        for (const row of rows.filter((r) => r[count] === 0)) expect(values.filter((v) => row[v] !== 0), `${table} ${JSON.stringify(row)}`).to.deep.equal([]);
        tables[table] = rows.filter((r) => r[count] !== 0);
      }
      return tables;
    };
    return {
      target: {
        upsertWorkloads: (records) => writer.upsertWorkloads(records),
        upsertPodIntervals: (intervals) => writer.upsertPodIntervals(intervals),
        writeWorkloads: (records, intervals) => writer.writeWorkloads(records, intervals),
        closeOpenIntervals: (workloadIds, at) => writer.closeOpenIntervals(workloadIds, at),
        deleteFinishedBatch: (cutoff, limit) => retention.deleteFinishedBatch(cutoff, limit),
        // Each save its own bucket, as the flusher writes one per workload and bucket.
        saveUsage: (workloadId, usage) => {
          const none = [0, 0, 0, 0, 0];
          const nulls = none.map(() => null);
          bucketAt += 60_000;
          return summaries.writeBucket(bucketAt, [{ workloadId, clusterId: 'local', count: none, sum: none, min: nulls, max: nulls, latestSum: none, latestCount: none, current: nulls, usage }]);
        },
      },
      podOwner: async (podUid) => (await sql.query<{ workload_id: string }>('SELECT workload_id FROM workload_pods WHERE pod_uid = $1', [podUid])).rows[0]?.workload_id,
      rollups: contents,
      recomputed: async () => {
        await sql.query('BEGIN');
        try {
          for (const statement of rollupRebuildSql()) await sql.query(statement);
          return await contents();
        } finally {
          await sql.query('ROLLBACK');
        }
      },
      raw: async () => ({
        workloads: (await sql.query<RawWorkload>(`SELECT ${RAW_WORKLOAD_COLUMNS} FROM workloads`)).rows,
        pods: (await sql.query<RawPod>(`SELECT ${RAW_POD_COLUMNS} FROM workload_pods`)).rows,
      }),
      usage: () => usageState(async (text) => (await sql.query<Record<string, unknown>>(text)).rows, (c) => `floor(${c} / 86400000.0)::bigint`),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
