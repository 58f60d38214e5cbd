// What the property tests check of usage (schema v6), on either backend: each usage rollup against a
// GROUP BY over workload_usage, each usage row's keys against its workloads row, and gpu_error given
// wherever it is due (src/store/rows/gpu-error.ts).
import { FAILURE_REASONS } from '../../src/domain/failure-reason.js';
import { USAGE_ROLLUPS, usageKeySql } from '../../src/store/usage/usage-columns.js';

const VALUES = ['util_seconds', 'util_weighted', 'idle_seconds', 'power_seconds', 'energy_dj'];
const OUTRANKED = FAILURE_REASONS.slice(FAILURE_REASONS.indexOf('gpu_error') + 1).map((r) => `'${r}'`).join(', ');

/** Runs a query on the backend: its rows, numbers as numbers. */
export type RunQuery = (sql: string) => Promise<Record<string, unknown>[]>;

export interface UsageState {
  /** Each rollup's rows that hold anything, by table. */
  rollup: Record<string, Record<string, unknown>[]>;
  /** The same from the usage rows. */
  recomputed: Record<string, Record<string, unknown>[]>;
  /** Usage rows counted at keys their workloads row does not have (the day included). */
  misplaced: Record<string, unknown>[];
  /** Failed or cancelled rows with a reason gpu_error outranks, whose GPUs reported an XID error. */
  gpuErrorMissing: Record<string, unknown>[];
}

export async function usageState(query: RunQuery, dayOf: (column: string) => string): Promise<UsageState> {
  const nonZero = VALUES.map((v) => `${v} <> 0`).join(' OR ');
  const rollup: UsageState['rollup'] = {};
  const recomputed: UsageState['recomputed'] = {};
  for (const usageRollup of USAGE_ROLLUPS) {
    const { table, keys } = usageRollup;
    const columns = keys.join(', ');
    // A weekly rollup's day is its Monday.
    const keyed = keys.map((k) => `${usageKeySql(usageRollup, k, k)} AS ${k}`).join(', ');
    rollup[table] = await query(`SELECT ${columns}, ${VALUES.join(', ')} FROM ${table} WHERE ${nonZero} ORDER BY ${columns}`);
    recomputed[table] = await query(`SELECT * FROM (SELECT ${keyed}, ${VALUES.map((v) => `CAST(SUM(${v}) AS BIGINT) AS ${v}`).join(', ')} FROM workload_usage
      WHERE day IS NOT NULL GROUP BY ${keys.map((_, i) => i + 1).join(', ')}) AS sums WHERE ${nonZero} ORDER BY ${columns}`);
  }
  return {
    rollup,
    recomputed,
    misplaced: await query(`SELECT u.workload_id FROM workload_usage u JOIN workloads w ON w.workload_id = u.workload_id
      WHERE u.organization_id IS DISTINCT FROM w.organization_id OR u.day IS DISTINCT FROM ${dayOf('w.submitted_at')}
         OR u.initiative_id IS DISTINCT FROM w.initiative_id OR u.submitted_by IS DISTINCT FROM w.submitted_by
         OR u.instance_type IS DISTINCT FROM w.instance_type OR u.failure_reason IS DISTINCT FROM COALESCE(w.failure_reason, '')`),
    gpuErrorMissing: await query(`SELECT w.workload_id FROM workloads w JOIN workload_usage u ON u.workload_id = w.workload_id
      WHERE u.gpu_errors > 0 AND w.status IN ('failed', 'cancelled') AND w.failure_reason IN (${OUTRANKED})`),
  };
}
