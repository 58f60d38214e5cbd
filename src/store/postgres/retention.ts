// Retention on PostgreSQL: the finished workloads completed before the cutoff are deleted in batches,
// with their pods, lifetime totals and usage, and taken out of the rollups in the same transaction (the
// deltas of rows that go from present to absent). Every replica runs the job; a transaction-level
// advisory lock lets one batch run at a time across replicas, and a replica that finds it taken
// skips its turn. Rows are locked with SKIP LOCKED so a batch never waits behind a cluster's writer.
import type pg from 'pg';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource } from '../rollups/definitions.js';
import { rollupDeltas } from '../rollups/deltas.js';
import { applyRollupDeltas } from './rollup-apply.js';
import { LOCK_CLASS } from './locks.js';
import { inTransaction } from './transaction.js';
import { deleteUsage } from './usage-writes.js';

/** (1735, -1): the retention pass, one replica at a time. */
const RETENTION_LOCK = `SELECT pg_try_advisory_xact_lock(${LOCK_CLASS}, -1) AS locked`;

const EXPIRED = `
  SELECT workload_id, ${ROLLUP_SOURCE_COLUMNS.filter((c) => c !== 'submitted_at').join(', ')}, submitted_at FROM workloads
  WHERE completed_at < $1 AND status IN ('completed', 'failed', 'cancelled')
  ORDER BY completed_at LIMIT $2 FOR UPDATE SKIP LOCKED`;
const DELETE_PODS = 'DELETE FROM workload_pods WHERE (workload_id, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))';
const DELETE_ROWS = 'DELETE FROM workloads WHERE (workload_id, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))';
const DELETE_LIFETIMES = 'DELETE FROM workload_gpu_lifetime WHERE workload_id = ANY($1::text[])';

export class PostgresRetention {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Deletes up to `limit` finished workloads completed before `cutoffMs`; returns how many. 0 when
   * another replica is deleting a batch right now: the job's next pass comes back.
   */
  async deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number> {
    if (!(Number.isInteger(limit) && limit > 0)) throw new Error(`Cannot delete finished workloads: "limit" must be a positive integer, got ${limit}`);
    const client = await this.#pool.connect();
    try {
      return await inTransaction(client, async () => {
        const locked = (await client.query<{ locked: boolean }>(RETENTION_LOCK)).rows[0]?.locked === true;
        if (!locked) return 0;
        const { rows } = await client.query<RollupSource & { workload_id: string }>(EXPIRED, [cutoffMs, limit]);
        if (rows.length === 0) return 0;
        const ids = rows.map((row) => row.workload_id);
        const months = rows.map((row) => row.submitted_at);
        await client.query(DELETE_PODS, [ids, months]);
        await client.query(DELETE_ROWS, [ids, months]);
        await client.query(DELETE_LIFETIMES, [ids]);
        await applyRollupDeltas(client, rollupDeltas(rows, []));
        await deleteUsage(client, ids);
        return rows.length;
      });
    } finally {
      client.release();
    }
  }
}
