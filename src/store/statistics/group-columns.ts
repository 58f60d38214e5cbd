// The column of the workloads row (alias w) that each statistics group_by reads. The group key is
// spliced into SQL, so it comes from this closed map, never from the caller. A workload without a
// failure reason (or, for gpu_model, no known model) belongs to the group '' (the rollups' key; the API
// shows it as null).
import type { StatsGroupKey } from '../../query/ports.js';

export const GROUP_COLUMNS: Record<StatsGroupKey, string> = {
  submitted_by: 'w.submitted_by',
  initiative_id: 'w.initiative_id',
  instance_type: 'w.instance_type',
  failure_reason: "COALESCE(w.failure_reason, '')",
  gpu_model: "COALESCE(w.gpu_model, '')",
};

/** The groupings the rollups hold; the others are summed from the rows. */
export function rollupsGroupBy(groupBy: StatsGroupKey | null): boolean {
  return groupBy !== 'gpu_model';
}
