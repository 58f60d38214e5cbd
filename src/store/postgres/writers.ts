// The store's one writer on PostgreSQL, in the two places it writes from: a cluster's session, on the
// connection that holds the cluster's write lock (lease.ts), and the pool, for what any replica may
// write (retention, and the rewrites of gpu_error after a bucket brought new XID errors).
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import type { WorkloadRecord } from '../../domain/workload.js';
import { AGGREGATE_COLUMNS, RECORD_COLUMNS, toRecord } from '../rows/row-mapping.js';
import { boundWriter, type ClusterWrites } from '../ports.js';
import type { StoredRow } from '../writes/write-driver.js';
import { WorkloadWriter } from '../writes/workload-writer.js';
import type { FencedConnection } from './lease.js';
import { ensurePartitions } from './partitions.js';
import { inTransaction } from './transaction.js';
import { PostgresWriteDriver } from './write-driver.js';

const ROW_COLUMNS = [...RECORD_COLUMNS, ...AGGREGATE_COLUMNS].join(', ');
const UNFINISHED = `SELECT ${ROW_COLUMNS} FROM workloads WHERE cluster_id = $1 AND status IN ('pending', 'running')`;

/** A cluster session's writes, and the indexer's read of what it must reconcile after a relist. */
export type SessionWrites = ClusterWrites;

/**
 * The writer of one cluster's session. The pending and running rows of the cluster are loaded once,
 * when the session starts, and kept in step with every commit: the indexer's reconcile reads them
 * synchronously (WorkloadSink). Months known to have their partitions are remembered for the session.
 */
export async function sessionWriter(connection: FencedConnection, options: { clock: Clock }): Promise<SessionWrites> {
  const unfinished = new Map<string, WorkloadRecord>();
  const months = new Set<number>();
  const track = (rows: readonly StoredRow[]) => {
    for (const row of rows) {
      if (row.cluster_id !== connection.clusterId) continue;
      if (row.status === 'pending' || row.status === 'running') unfinished.set(row.workload_id, toRecord(row));
      else unfinished.delete(row.workload_id);
    }
  };
  const driver = new PostgresWriteDriver({
    transaction: (work) => connection.transaction(work),
    ensureMonths: async (times) => {
      const created = await connection.outside((client) => ensurePartitions(client, times, { known: months }));
      for (const month of created) months.add(month);
    },
  });
  const writer = new WorkloadWriter(driver, { clock: options.clock, onCommit: track });
  track(await connection.transaction(async (client) => (await client.query<StoredRow>(UNFINISHED, [connection.clusterId])).rows));
  return { ...boundWriter(writer), listUnfinished: (clusterId) => (clusterId === connection.clusterId ? [...unfinished.values()] : []) };
}

/** The writer on connections of the pool, each call one transaction of its own. */
export function poolWriter(pool: pg.Pool, options: { clock: Clock }): WorkloadWriter {
  const driver = new PostgresWriteDriver({
    transaction: async (work) => {
      const client = await pool.connect();
      try {
        return await inTransaction(client, () => work(client));
      } finally {
        client.release();
      }
    },
  });
  return new WorkloadWriter(driver, options);
}
