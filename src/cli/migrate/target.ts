// The PostgreSQL side of `gpucap migrate`: one maintenance connection that brings the schema up to
// date, holds the migrator's lock for the whole run, and answers what the run must know before it
// writes: is a writer of the source's clusters alive, and does the target already hold their rows.
import { connectMaintenance, type ConnectionLogger } from '../../store/postgres/connection.js';
import { LOCK_CLASS } from '../../store/postgres/locks.js';
import { migrate } from '../../store/postgres/migrations/migrate.js';
import { inTransaction, type Queryable } from '../../store/postgres/transaction.js';
import { ensureCheckpointTable } from './checkpoints.js';
import { TransferRefused } from './errors.js';

/**
 * (1735, -2): one `gpucap migrate` at a time per database, held by the session for the whole run.
 * (1735, 0) is the schema lock, (1735, -1) retention's, (1735, cluster_key > 0) the writers'.
 */
const MIGRATOR_LOCK = -2;

/**
 * A writer heartbeats every ha_retry_seconds (2 by default, at most 60); a heartbeat younger than this
 * is a writer that may still be writing.
 */
export const FRESH_HEARTBEAT_SECONDS = 120;

export interface Target {
  client: Queryable;
  close(): Promise<void>;
}

export async function openTarget(url: string, options: { logger: ConnectionLogger; now: number }): Promise<Target> {
  const client = await connectMaintenance(url, { instanceId: 'migrate', logger: options.logger });
  const close = async () => {
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  };
  try {
    await migrate(client, { now: options.now });
    const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_CLASS}, ${MIGRATOR_LOCK}) AS locked`);
    if (rows[0]?.locked !== true) {
      throw new TransferRefused(
        `Another gpucap migrate is running on this database (it holds advisory lock ${LOCK_CLASS}, ${MIGRATOR_LOCK}); ` +
          'wait for it to finish',
      );
    }
    await ensureCheckpointTable(client);
    // Each chunk commits with its checkpoint, so a commit lost in a crash of the server loses both
    // together, and a resume writes that chunk again: no commit needs to wait for its WAL flush.
    await client.query('SET synchronous_commit = off');
  } catch (error) {
    await close();
    throw error;
  }
  return { client, close };
}

export interface LiveWriter {
  clusterId: string;
  holder: string;
  heartbeatAgeSeconds: number;
}

/** The writers of `clusters` whose heartbeat is fresh: copying older rows under them would undo their writes. */
export async function liveWriters(client: Queryable, clusters: readonly string[]): Promise<LiveWriter[]> {
  const { rows } = await client.query<{ cluster_id: string; holder: string; age: number }>(
    `SELECT cluster_id, holder, GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - heartbeat_at))::float8 AS age
     FROM writer_leases WHERE cluster_id = ANY($1::text[]) AND heartbeat_at > clock_timestamp() - make_interval(secs => $2)
     ORDER BY cluster_id`,
    [clusters, FRESH_HEARTBEAT_SECONDS],
  );
  return rows.map((row) => ({ clusterId: row.cluster_id, holder: row.holder, heartbeatAgeSeconds: row.age }));
}

/** Whether the target holds any workload of `clusters`. */
export async function holdsClusters(client: Queryable, clusters: readonly string[]): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM workloads WHERE cluster_id = ANY($1::text[]) LIMIT 1', [clusters]);
  return rows.length > 0;
}

/** Workloads rows of `clusters` in the target. */
export async function countClusters(client: Queryable, clusters: readonly string[]): Promise<number> {
  const { rows } = await client.query<{ n: number }>('SELECT COUNT(*) AS n FROM workloads WHERE cluster_id = ANY($1::text[])', [clusters]);
  return rows[0]?.n ?? 0;
}

/** Deletes the workloads of `clusters`, their pods, lifetime totals and usage, in one transaction (--restart). */
export async function deleteClusters(client: Queryable, clusters: readonly string[]): Promise<void> {
  await inTransaction(client, async () => {
    await client.query(
      `DELETE FROM workload_pods p USING workloads w
       WHERE w.workload_id = p.workload_id AND w.submitted_at = p.submitted_at AND w.cluster_id = ANY($1::text[])`,
      [clusters],
    );
    await client.query(
      'DELETE FROM workload_gpu_lifetime l USING workloads w WHERE w.workload_id = l.workload_id AND w.cluster_id = ANY($1::text[])',
      [clusters],
    );
    // Usage goes from its rollup when the rollups phase rebuilds it from what is left.
    await client.query(
      'DELETE FROM workload_usage u USING workloads w WHERE w.workload_id = u.workload_id AND w.cluster_id = ANY($1::text[])',
      [clusters],
    );
    await client.query('DELETE FROM workloads WHERE cluster_id = ANY($1::text[])', [clusters]);
  });
}

/** The rows of a table keyed by (workload_id, submitted_at), the pairs as two arrays: $1 the ids, $2 their months. */
const IN_KEYS = '(workload_id, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))';

/**
 * Deletes the workloads of these keys with their pods, lifetime totals and usage (rows the source no longer
 * holds). The caller runs it in its chunk's transaction.
 */
export async function deleteWorkloads(client: Queryable, keys: readonly { workload_id: string; submitted_at: number }[]): Promise<void> {
  const ids = keys.map((k) => k.workload_id);
  const months = keys.map((k) => k.submitted_at);
  await client.query(`DELETE FROM workload_pods WHERE ${IN_KEYS}`, [ids, months]);
  await client.query('DELETE FROM workload_gpu_lifetime WHERE workload_id = ANY($1::text[])', [ids]);
  await client.query('DELETE FROM workload_usage WHERE workload_id = ANY($1::text[])', [ids]);
  await client.query(`DELETE FROM workloads WHERE ${IN_KEYS}`, [ids, months]);
}
