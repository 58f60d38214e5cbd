// Usage saved as the telemetry flow of the test backend saves it: SQLite's lifetime store on the
// service's file (its own connection, as the write worker has), or PostgreSQL's bucket writer. Both
// add what the GPUs did since the last save.
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { GpuUsage } from '../../src/domain/gpu-usage.js';
import { TYPES } from '../../src/store/postgres/connection.js';
import { PostgresGpuSummaries } from '../../src/store/postgres/gpu-summaries.js';
import { lifetimeSaves, SqliteLifetimeStore } from '../../src/store/sqlite/lifetime-store.js';
import { executorOf, sqliteWriter } from '../../src/store/sqlite/connection-ports.js';
import { systemClock } from '../../src/domain/clock.js';
import type { TestIndexLocation } from './backend.js';

/** Adds `added` to the workload's usage; `bucketAt` is the PostgreSQL bucket it comes with (one per workload and bucket). */
export async function saveUsage(location: TestIndexLocation, workloadId: string, added: GpuUsage, bucketAt: number): Promise<void> {
  if (location.kind === 'sqlite') {
    const db = new BetterSqlite3(location.path);
    db.pragma('busy_timeout = 5000');
    try {
      const writer = sqliteWriter(db, { clock: systemClock });
      await lifetimeSaves(new SqliteLifetimeStore(db), { executor: executorOf(db), writer })([{ workloadId, totals: {}, usage: added }]);
    } finally {
      db.close();
    }
    return;
  }
  const pool = new pg.Pool({ connectionString: location.url, max: 1, types: TYPES });
  try {
    const none = [0, 0, 0, 0, 0];
    const nulls = none.map(() => null);
    await new PostgresGpuSummaries({ primary: pool, readers: pool }).writeBucket(bucketAt, [
      { workloadId, clusterId: 'gpu-east', count: none, sum: none, min: nulls, max: nulls, latestSum: none, latestCount: none, current: nulls, usage: added },
    ]);
  } finally {
    await pool.end();
  }
}

