// The UPDATE of a row the writer read before writing it: it sets the columns that no index holds,
// and of the indexed ones only the families with a column that changes. SQLite rewrites the entry of
// every index that holds a column named in the SET list, even to the same value (docs/performance.md,
// "Findings along the way"); the upsert of a new row names every column, and an update of a stored
// one through it rewrote every index of workloads, where most updates change a status and its times,
// or only the resourceVersion. Families rather than single columns keep the texts, each a
// prepared statement, to 32, built once.
import { AGGREGATE_COLUMNS, RECORD_COLUMNS, type WorkloadRow } from '../rows/row-mapping.js';

/** The indexed columns of workloads, in families that change together (schema: migrations.ts and later). */
const INDEXED_FAMILIES: readonly (readonly (keyof WorkloadRow)[])[] = [
  ['status', 'started_at', 'completed_at'],
  ['initiative_id', 'submitted_by', 'is_managed'],
  ['instance_type', 'gpu_count', 'cluster_id'],
  ['organization_id', 'submitted_at'],
];

/**
 * The other columns, held by no index (namespace, name, kind, exit_code, resource_version,
 * failure_reason): always set, at no cost beyond the row itself. A column added to the records is
 * here, set at every update, until it joins a family.
 */
const UNINDEXED = RECORD_COLUMNS.filter(
  (column) => column !== 'workload_id' && !INDEXED_FAMILIES.some((family) => family.includes(column)),
);

const assignments = (columns: readonly string[]) => columns.map((c) => `${c} = @${c}`);

/** The UPDATE that sets the families of `mask` (bit i: INDEXED_FAMILIES[i]), and the GPU aggregates when its next bit is set. */
function updateSql(mask: number): string {
  const changed = INDEXED_FAMILIES.filter((_, i) => (mask & (1 << i)) !== 0).flat();
  const aggregates = (mask & WITH_AGGREGATES) === 0 ? [] : AGGREGATE_COLUMNS;
  const sets = [...assignments([...UNINDEXED, ...changed, ...aggregates]), 'updated_at = @updated_at'];
  return `UPDATE workloads SET ${sets.join(', ')} WHERE workload_id = @workload_id`;
}

const WITH_AGGREGATES = 1 << INDEXED_FAMILIES.length;
const TEXTS = Array.from({ length: WITH_AGGREGATES * 2 }, (_, mask) => updateSql(mask));

/**
 * The statement text that turns `stored` into `row` (same workload_id), stamping updated_at, and with
 * `withAggregates` setting its GPU aggregates (summed from its pods again) too.
 */
export function storedRowUpdateSql(stored: WorkloadRow, row: WorkloadRow, withAggregates: boolean): string {
  let mask = withAggregates ? WITH_AGGREGATES : 0;
  INDEXED_FAMILIES.forEach((family, i) => {
    if (family.some((column) => stored[column] !== row[column])) mask |= 1 << i;
  });
  return TEXTS[mask];
}
