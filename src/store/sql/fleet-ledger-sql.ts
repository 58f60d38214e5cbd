// The statements of the fleet's history (schema v14, capacity types v15) that read and write the same in both engines:
// named parameters, one row at a time on SQLite; PostgreSQL's writes take arrays (postgres/fleet-ledger-writes.ts).

export const FLEET_TABLES = { hour: 'fleet_hours', day: 'fleet_days' } as const;
export type FleetGrain = keyof typeof FLEET_TABLES;

export const FLEET_VALUE_COLUMNS = ['capacity_ms', 'unavailable_ms', 'allocated_ms', 'idle_ms'] as const;

/** Adds a row's GPU time to its hour (or day): the values sum, the labels are the latest. */
export function addFleetRowSql(grain: FleetGrain, values: string): string {
  const table = FLEET_TABLES[grain];
  return `INSERT INTO ${table} (organization_id, ${grain}, cluster_id, node, gpu_model, instance_type, capacity_type,
      ${FLEET_VALUE_COLUMNS.join(', ')})
    ${values}
    ON CONFLICT (organization_id, ${grain}, cluster_id, node) DO UPDATE SET
      gpu_model = excluded.gpu_model, instance_type = excluded.instance_type, capacity_type = excluded.capacity_type,
      ${FLEET_VALUE_COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`;
}

export const FLEET_MARK_SQL = 'SELECT covered_to FROM fleet_marks WHERE cluster_id = @cluster_id';
export const SET_FLEET_MARK_SQL = `INSERT INTO fleet_marks (cluster_id, covered_to) VALUES (@cluster_id, @covered_to)
  ON CONFLICT (cluster_id) DO UPDATE SET covered_to = excluded.covered_to`;
