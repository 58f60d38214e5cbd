// What an upsert makes of a stored row, as plain functions: the PostgreSQL writer applies them in
// code (it reads the stored rows in its transaction anyway, for the rollup deltas). They make every
// write idempotent and order-proof, so that a replayed batch, a relist, or a new writer whose cache
// lags the dead one's changes nothing it should not:
// - submitted_at never changes once written: it is the partition key, and a fallback value (the
//   time the object was first seen) differs between replicas;
// - a finished row stays finished: an older event (pending, running) must not reopen it or move its
//   start, completion or exit code; its labels still follow the namespace and node (budget remaps).
//   A finished view replaces a finished row, as in SQLite: a pod deleted with a grace period is
//   cancelled at once with exit code 0, and gets its container's exit code (137) when it stops;
// - a known instance type is never replaced by `unknown`, nor a known capacity type by NULL (its node is gone);
// - a row whose every column would stay the same is not written (a relist rewrites nothing).
import { isTerminal, UNKNOWN, type WorkloadStatus } from '../../domain/workload.js';
import { RECORD_COLUMNS, type WorkloadRow } from './row-mapping.js';

const MUTABLE = RECORD_COLUMNS.filter((column) => column !== 'workload_id');

/** The row to write for `incoming`, or null when the stored row already holds it. */
export function mergeWorkload(stored: WorkloadRow | undefined, incoming: WorkloadRow): WorkloadRow | null {
  if (stored === undefined) return incoming;
  const merged: WorkloadRow = { ...incoming, submitted_at: stored.submitted_at };
  if (isTerminal(stored.status as WorkloadStatus) && !isTerminal(incoming.status as WorkloadStatus)) {
    merged.status = stored.status;
    merged.started_at = stored.started_at;
    merged.completed_at = stored.completed_at;
    merged.exit_code = stored.exit_code;
    merged.failure_reason = stored.failure_reason;
    merged.allocated_gpus = stored.allocated_gpus;
    merged.gpu_sharing = stored.gpu_sharing;
    merged.gpu_model = stored.gpu_model;
    merged.resource_version = stored.resource_version;
  }
  if (incoming.instance_type === UNKNOWN) merged.instance_type = stored.instance_type;
  if (incoming.capacity_type === null) merged.capacity_type = stored.capacity_type;
  // An empty resourceVersion is a write that must land (tests and benchmarks seed rows this way).
  if (incoming.resource_version !== '') {
    const same = MUTABLE.every((column) => merged[column] === stored[column]);
    if (same) return null;
  }
  return merged;
}

export interface PodRow {
  pod_uid: string;
  workload_id: string;
  /** The GPUs it held, in whole-GPU equivalents (schema v12; devices before, and where no share is known). */
  gpus: number;
  started_at: number | null;
  finished_at: number | null;
}

/**
 * The pod row to write, or null when the stored one already holds it. Once its workload is finished,
 * a closed interval stays closed: a Job's pods outlive it while the garbage collector deletes them,
 * and their late events (still running) must not reopen what the Job's end closed.
 */
export function mergePod(stored: PodRow | undefined, incoming: PodRow, ownerFinished: boolean): PodRow | null {
  const merged: PodRow = { ...incoming };
  if (merged.finished_at === null && ownerFinished && stored !== undefined) merged.finished_at = stored.finished_at;
  if (
    stored !== undefined &&
    stored.workload_id === merged.workload_id &&
    stored.gpus === merged.gpus &&
    stored.started_at === merged.started_at &&
    stored.finished_at === merged.finished_at
  ) {
    return null;
  }
  return merged;
}
