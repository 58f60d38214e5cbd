// The fleet as CSV: GET /v1/fleet as one record for the whole and one per group (`level` says
// which), GET /v1/fleet/nodes as one record per node, every node that matches (no page).
import type { presentFleet, presentFleetNode } from '../fleet-presenters.js';
import { csvFilename, recordsOf, type CsvTable } from './csv-table.js';

const FIGURES = ['total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus', 'nodes', 'nodes_unavailable'] as const;
const FLEET_COLUMNS = ['level', 'key', ...FIGURES] as const;

export const FLEET_NODE_COLUMNS = [
  'cluster_id', 'node', 'gpu_model', 'instance_type', 'pool_id', 'state', 'gpu_sharing',
  'total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus', 'unhealthy_gpus',
] as const;

export function fleetCsv(fleet: ReturnType<typeof presentFleet>, organizationId: string, now: number): CsvTable {
  const rows = [
    { level: 'fleet', key: organizationId, ...fleet.now },
    ...fleet.grouped.map((group) => ({ level: 'group', ...group })),
  ];
  return { filename: csvFilename('fleet', organizationId, now), columns: FLEET_COLUMNS, records: [recordsOf(FLEET_COLUMNS, rows)] };
}

export function fleetNodesCsv(nodes: readonly ReturnType<typeof presentFleetNode>[], organizationId: string, now: number): CsvTable {
  return {
    filename: csvFilename('fleet-nodes', organizationId, now),
    columns: FLEET_NODE_COLUMNS,
    records: [recordsOf(FLEET_NODE_COLUMNS, nodes)],
  };
}
