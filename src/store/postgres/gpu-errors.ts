// gpu_error on PostgreSQL (src/store/common/gpu-error-reason.ts): the row writers look up the XID
// errors of the rows that may take it, and the bucket writer, once a bucket brought new errors,
// rewrites the failed rows they concern, with their rollups and usage keys, in a transaction of its own.
import type pg from 'pg';
import { mayBeGpuError } from '../common/gpu-error-reason.js';
import type { WorkloadRow } from '../common/row-mapping.js';
import { ROLLUP_SOURCE_COLUMNS, type RollupSource } from '../rollups/definitions.js';
import { rollupDeltas } from '../rollups/deltas.js';
import { applyRollupDeltas } from './rollup-apply.js';
import { inTransaction } from './transaction.js';
import type { UsageKeySource } from '../rollups/usage-keys.js';
import { syncUsageKeys } from './usage-writes.js';

const WITH_GPU_ERRORS = 'SELECT workload_id FROM workload_usage WHERE workload_id = ANY($1::text[]) AND gpu_errors > 0';

/** Sets failure_reason to gpu_error on those of `rows` it applies to; the rows are written after. */
export async function applyGpuErrors(client: pg.ClientBase, rows: Iterable<WorkloadRow>): Promise<void> {
  const candidates = [...rows].filter(mayBeGpuError);
  if (candidates.length === 0) return;
  const { rows: erred } = await client.query<{ workload_id: string }>(WITH_GPU_ERRORS, [candidates.map((row) => row.workload_id)]);
  const ids = new Set(erred.map((row) => row.workload_id));
  for (const row of candidates) if (ids.has(row.workload_id)) row.failure_reason = 'gpu_error';
}

type Stored = RollupSource & UsageKeySource;

// Each row in its month (workload_keys), locked in workload_id order as the row writers lock theirs.
const LOCK_ROWS = `
  SELECT w.workload_id, ${ROLLUP_SOURCE_COLUMNS.filter((c) => c !== 'submitted_at').map((c) => `w.${c}`).join(', ')}, w.submitted_at
  FROM workload_keys k JOIN workloads w ON w.workload_id = k.workload_id AND w.submitted_at = k.submitted_at
  WHERE k.workload_id = ANY($1::text[]) ORDER BY w.workload_id FOR UPDATE OF w`;
const SET_GPU_ERROR = `
  UPDATE workloads SET failure_reason = 'gpu_error', updated_at = $3
  WHERE (workload_id, submitted_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))`;

/** Rewrites those of the workloads' rows already failed with a reason gpu_error outranks. Returns how many. */
export async function escalateGpuErrors(pool: pg.Pool, workloadIds: readonly string[], now: number): Promise<number> {
  if (workloadIds.length === 0) return 0;
  const client = await pool.connect();
  try {
    return await inTransaction(client, async () => {
      const { rows } = await client.query<Stored>(LOCK_ROWS, [workloadIds]);
      const before = rows.filter(mayBeGpuError);
      if (before.length === 0) return 0;
      const after = before.map((row) => ({ ...row, failure_reason: 'gpu_error' }));
      await client.query(SET_GPU_ERROR, [after.map((row) => row.workload_id), after.map((row) => row.submitted_at), now]);
      await applyRollupDeltas(client, rollupDeltas(before, after));
      await syncUsageKeys(client, after);
      return after.length;
    });
  } finally {
    client.release();
  }
}
