// gpu_error on SQLite (src/store/common/gpu-error-reason.ts): the rows about to be written that may
// take it have their GPUs' XID errors looked up, one query for the batch.
import type { WorkloadRow } from '../common/row-mapping.js';
import { SQLITE } from '../common/dialect.js';
import { mayBeGpuError, withGpuErrorsQuery } from '../common/gpu-error-reason.js';
import type { StatementCache } from './workload-sql.js';

/** Sets failure_reason to gpu_error on those of `rows` it applies to; the rows are written after. */
export function applyGpuErrors(statements: StatementCache, rows: Iterable<WorkloadRow>): void {
  const candidates = [...rows].filter(mayBeGpuError);
  if (candidates.length === 0) return;
  const ids = JSON.stringify(candidates.map((row) => row.workload_id));
  const erred = new Set(statements.get(withGpuErrorsQuery(SQLITE)).pluck().all({ ids }) as string[]);
  for (const row of candidates) if (erred.has(row.workload_id)) row.failure_reason = 'gpu_error';
}
