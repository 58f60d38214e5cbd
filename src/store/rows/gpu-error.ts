// `gpu_error` (docs/api.md "Failure reasons"): a failed or cancelled workload on whose GPUs the
// exporters reported an XID error while it ran. Kubernetes' status does not say so; the usage figures
// do (workload_usage.gpu_errors). So the writers decide it, in two places that meet whichever comes
// first: a row written failed with a reason gpu_error outranks looks its errors up, and a save that
// brings new errors rewrites the failed rows it concerns. Either way the row changes through the
// writer's own path, so the rollups follow it.
import { FAILURE_REASONS } from '../../domain/failure-reason.js';
import type { SqlDialect } from '../sql/dialect.js';
import type { SqlReader } from '../sql/executor.js';

/** The reasons gpu_error outranks: those after it in precedence order. */
const OUTRANKED: ReadonlySet<string> = new Set(FAILURE_REASONS.slice(FAILURE_REASONS.indexOf('gpu_error') + 1));

/** Whether the row would take gpu_error if its GPUs reported an XID error. */
export function mayBeGpuError(row: { status: string; failure_reason: string | null }): boolean {
  return (row.status === 'failed' || row.status === 'cancelled') && row.failure_reason !== null && OUTRANKED.has(row.failure_reason);
}

/** Those of the `ids` list parameter whose GPUs reported an XID error. */
export function withGpuErrorsQuery(d: SqlDialect): string {
  return `SELECT workload_id FROM workload_usage WHERE ${d.inList('workload_id', 'ids')} AND gpu_errors > 0`;
}

/**
 * Sets failure_reason to gpu_error on those of `rows` it applies to, looking up their GPUs' XID
 * errors in one query; the rows are written after.
 */
export async function markGpuErrors(
  rows: Iterable<{ workload_id: string; status: string; failure_reason: string | null }>,
  on: { reader: SqlReader; dialect: SqlDialect },
): Promise<void> {
  const { reader, dialect: d } = on;
  const candidates = [...rows].filter(mayBeGpuError);
  if (candidates.length === 0) return;
  const ids = d.listValue(candidates.map((row) => row.workload_id));
  const found = await reader.all<{ workload_id: string }>({ sql: withGpuErrorsQuery(d), params: { ids } });
  const erred = new Set(found.map((row) => row.workload_id));
  for (const row of candidates) if (erred.has(row.workload_id)) row.failure_reason = 'gpu_error';
}
