// GET /v1/capacity as CSV: one record per budget, the organization's first, then each pool and each
// initiative, `level` saying which. The organization's totals go under the budgets' names
// (total_allocated_gpu_hours as allocated_gpu_hours, …); its active GPUs and a pool's instance types
// (space-separated), hardware in the period and over-commitment have columns of their own that the others leave empty.
import type { presentCapacity } from '../presenters.js';
import { csvFilename, recordsOf, type CsvTable } from './csv-table.js';

type PresentedCapacity = ReturnType<typeof presentCapacity>;

const COLUMNS = [
  'level', 'id', 'name', 'allocated_gpu_hours', 'used_gpu_hours', 'remaining_gpu_hours', 'burn_rate_gpu_hours_per_day',
  'projected_used_gpu_hours_at_period_end', 'projected_exhaustion_at', 'current_active_gpus', 'instance_types',
  'capacity_gpu_hours_in_period', 'over_committed',
] as const;
/** With prices only, after the others, so that a table without them keeps its columns. */
const COST_COLUMNS = [
  'currency', 'allocated_cost', 'used_cost', 'remaining_cost', 'burn_rate_cost_per_day', 'projected_used_cost_at_period_end',
  'projected_cost_exhaustion_at', 'unpriced_gpu_hours',
] as const;

export function capacityCsv(capacity: PresentedCapacity, now: number): CsvTable {
  const { summary } = capacity;
  const priced = 'currency' in capacity;
  const cost = summary as Record<string, unknown>;
  const rows: Record<string, unknown>[] = [
    {
      ...summary,
      level: 'organization',
      id: capacity.organization_id,
      allocated_gpu_hours: summary.total_allocated_gpu_hours,
      used_gpu_hours: summary.total_used_gpu_hours,
      remaining_gpu_hours: summary.total_remaining_gpu_hours,
      ...(priced
        ? { allocated_cost: cost.total_allocated_cost, used_cost: cost.total_used_cost, remaining_cost: cost.total_remaining_cost }
        : {}),
    },
    ...capacity.pools.map((pool) => ({ ...pool, level: 'pool', id: pool.pool_id, instance_types: pool.instance_types.join(' ') })),
    ...capacity.initiatives.map((initiative) => ({ ...initiative, level: 'initiative', id: initiative.initiative_id })),
  ];
  const columns = priced ? [...COLUMNS, ...COST_COLUMNS] : COLUMNS;
  const currency = priced ? capacity.currency : undefined;
  const records = recordsOf(columns, rows.map((row) => ({ ...row, currency })));
  return { filename: csvFilename('capacity', capacity.organization_id, now), columns, records: [records] };
}
