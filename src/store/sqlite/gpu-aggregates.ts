// The GPU aggregates of a workload from its pods. Every write that changes a workload's pods sums
// them again with AGGREGATES_OF_PODS, this one text, so that a row refreshed after its pods changed
// and a row written together with its pods hold the same doubles to the last bit (the terms are
// summed in the order of workload_pods_workload). Pods that never started hold no GPU time; times
// are stored in ms, the aggregates in seconds. PostgreSQL sums whole GPU-ms and divides once (its
// writer's AGGREGATES_OF_PODS): the two differ in the last bits, never in whole GPU-ms.
import { SOURCE_COLUMNS, type SourceRow } from './rollup-apply.js';
import type { StatementCache } from './workload-sql.js';

/** One row (closed, open_gpus, open_start): the aggregates of workload @workload_id. */
export const AGGREGATES_OF_PODS = `
    SELECT TOTAL(CASE WHEN finished_at IS NOT NULL THEN gpus * MAX(0, finished_at - started_at) / 1000.0 END) AS closed,
           COALESCE(SUM(CASE WHEN finished_at IS NULL THEN gpus END), 0) AS open_gpus,
           TOTAL(CASE WHEN finished_at IS NULL THEN gpus * started_at / 1000.0 END) AS open_start
    FROM workload_pods WHERE workload_id = @workload_id AND started_at IS NOT NULL`;

/** Sets a row's GPU aggregates to AGGREGATES_OF_PODS's sums, read in the statement's FROM as `a`. */
export const SET_AGGREGATES_OF_PODS = 'gpu_seconds_closed = a.closed, open_gpus = a.open_gpus, open_gpu_start_sum = a.open_start';

// Rewrites the row even when its sums stay the same: updated_at marks every change of a row's pods,
// which is how a delta copy of the file finds the pods that changed (src/store/transfer/source.ts).
const REFRESH_AGGREGATES = `
  UPDATE workloads SET
    ${SET_AGGREGATES_OF_PODS}, updated_at = @updatedAt
  FROM (${AGGREGATES_OF_PODS}
  ) AS a
  WHERE workloads.workload_id = @workload_id
  RETURNING ${SOURCE_COLUMNS}`;

/**
 * Inside a write transaction: brings the GPU aggregates of `workloadIds` in step with their pods;
 * returns the rollup columns of the rows as they became, by id (ids without a row are left out).
 */
export function refreshAggregates(statements: StatementCache, workloadIds: Iterable<string>, updatedAt: number): Map<string, SourceRow> {
  const refresh = statements.get(REFRESH_AGGREGATES);
  const after = new Map<string, SourceRow>();
  for (const workloadId of workloadIds) {
    const row = refresh.get({ workload_id: workloadId, updatedAt }) as SourceRow | undefined;
    if (row !== undefined) after.set(workloadId, row);
  }
  return after;
}
