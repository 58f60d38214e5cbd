// The fleet as CSV: GET /v1/fleet as one record for the whole, one per group and one per interval of
// the series and its groups (`level` says which; the figures now are empty on series records),
// GET /v1/fleet/nodes as one record per node, every node that matches (no page). With prices the
// fleet's records add the currency and the costs; without, the columns are what they were.
import type { presentFleet, presentFleetNode } from '../fleet-presenters.js';
import { csvFilename, recordsOf, type CsvTable } from './csv-table.js';

const FIGURES = ['total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus', 'nodes', 'nodes_unavailable'] as const;
const HOURS = [
  'capacity_gpu_hours', 'unavailable_gpu_hours', 'allocated_gpu_hours', 'idle_gpu_hours', 'unallocated_gpu_hours',
  'allocation_rate', 'utilization_rate',
] as const;
const FLEET_COLUMNS = ['level', 'key', 'start', 'end', ...FIGURES, ...HOURS] as const;
const COST_COLUMNS = ['currency', 'capacity_cost', 'allocated_cost', 'idle_cost', 'unallocated_cost', 'unpriced_gpu_hours'] as const;

export const FLEET_NODE_COLUMNS = [
  'cluster_id', 'node', 'gpu_model', 'instance_type', 'pool_id', 'state', 'gpu_sharing',
  'total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus', 'unhealthy_gpus',
] as const;

export function fleetCsv(fleet: ReturnType<typeof presentFleet>, organizationId: string, now: number): CsvTable {
  const range = { start: fleet.start, end: fleet.end };
  const rows = [
    { level: 'fleet', key: organizationId, ...range, ...fleet.now, ...fleet.summary },
    ...fleet.grouped.map((group) => ({ level: 'group', ...range, ...group })),
    ...(fleet.series ?? []).flatMap((entry) => [
      { level: 'series', key: '', ...entry },
      ...(entry.grouped ?? []).map((group) => ({ level: 'series_group', start: entry.start, ...group })),
    ]),
  ];
  const currency = 'currency' in fleet ? fleet.currency : undefined;
  const columns = currency === undefined ? FLEET_COLUMNS : [...FLEET_COLUMNS, ...COST_COLUMNS];
  const records = recordsOf(columns, currency === undefined ? rows : rows.map((row) => ({ ...row, currency })));
  return { filename: csvFilename('fleet', organizationId, now), columns, records: [records] };
}

export function fleetNodesCsv(nodes: readonly ReturnType<typeof presentFleetNode>[], organizationId: string, now: number): CsvTable {
  return {
    filename: csvFilename('fleet-nodes', organizationId, now),
    columns: FLEET_NODE_COLUMNS,
    records: [recordsOf(FLEET_NODE_COLUMNS, nodes)],
  };
}
