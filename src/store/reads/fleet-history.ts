// The read of the fleet's history (schema v14, capacity types v15), the same text in both engines:
// the rows of one organization's range in the primary key's order, summed per bucket and cluster,
// model, instance type and capacity type (and node, when grouped by node). What the API makes of
// them is the query layer's (src/query/fleet-history.ts): pools are instance types, so a pool's
// figures are sums of these, and a rate matches on the kind of GPU the row keeps apart.
import { isCapacityType } from '../../domain/capacity-type.js';
import type { FleetHistoryQuery, FleetHistoryRow } from '../../query/ports.js';
import type { SqlDialect, SqlParams } from '../sql/dialect.js';
import { FLEET_TABLES } from '../sql/fleet-ledger-sql.js';

export function fleetHistoryQuery(d: SqlDialect, query: FleetHistoryQuery): { sql: string; params: SqlParams } {
  const at = query.grain;
  const params: SqlParams = { organization_id: query.organizationId, from: query.from, to: query.to };
  const where = [`organization_id = @organization_id`, `${at} >= @from`, `${at} < @to`];
  if (query.clusterId !== undefined) {
    where.push('cluster_id = @cluster_id');
    params.cluster_id = query.clusterId;
  }
  if (query.gpuModel !== undefined) {
    where.push('gpu_model = @gpu_model');
    params.gpu_model = query.gpuModel;
  }
  const node = query.byNode ? 'node' : `'' AS node`;
  const groups = ['at', 'cluster_id', ...(query.byNode ? ['node'] : []), 'gpu_model', 'instance_type', 'capacity_type'];
  return {
    sql: `SELECT ${at} AS at, cluster_id, ${node}, gpu_model, instance_type, capacity_type,
        ${d.total('capacity_ms')} AS capacity_ms, ${d.total('unavailable_ms')} AS unavailable_ms,
        ${d.total('allocated_ms')} AS allocated_ms, ${d.total('idle_ms')} AS idle_ms
      FROM ${FLEET_TABLES[at]} WHERE ${where.join(' AND ')}
      GROUP BY ${groups.map((g) => (g === 'at' ? at : g)).join(', ')}`,
    params,
  };
}

export interface FleetHistorySqlRow {
  at: number | string;
  cluster_id: string;
  node: string;
  gpu_model: string | null;
  instance_type: string;
  capacity_type: string | null;
  capacity_ms: number;
  unavailable_ms: number;
  allocated_ms: number;
  idle_ms: number;
}

export function fleetHistoryRow(row: FleetHistorySqlRow): FleetHistoryRow {
  return {
    at: Number(row.at), clusterId: row.cluster_id, node: row.node, gpuModel: row.gpu_model, instanceType: row.instance_type,
    // A value no release wrote (an older or newer one's) is no capacity type a rate can name.
    capacityType: isCapacityType(row.capacity_type) ? row.capacity_type : null,
    capacityMs: row.capacity_ms, unavailableMs: row.unavailable_ms, allocatedMs: row.allocated_ms, idleMs: row.idle_ms,
  };
}
