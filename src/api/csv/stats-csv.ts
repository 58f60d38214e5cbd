// GET /v1/workloads/stats as CSV: one table whose first column, `row`, says what each record is: the
// summary, a group (group_by), or an interval of the series (interval, with its start). Every record
// has the figures of a group under the same names; the summary's totals go in them too
// (total_workloads as workload_count, total_gpu_hours as gpu_hours, …), and its average duration in a
// column of its own that groups leave empty.
import type { StatsGroupKey } from '../../query/ports.js';
import type { presentStats } from '../presenters.js';
import { csvFilename, recordsOf, type CsvTable } from './csv-table.js';

type PresentedStats = ReturnType<typeof presentStats>;

const FIGURES = ['workload_count', 'gpu_hours', 'average_duration_seconds', 'success_rate', 'average_queue_seconds'] as const;
const USAGE = ['idle_gpu_hours', 'gpu_efficiency', 'utilization_coverage', 'energy_kwh', 'energy_coverage'] as const;
/** With prices only, after the usage, so that a table without them keeps its columns. */
const COST = ['currency', 'cost', 'idle_cost', 'unpriced_gpu_hours'] as const;

export function statsCsv(
  stats: PresentedStats,
  options: { groupBy: StatsGroupKey | undefined; interval: boolean; organizationId: string; now: number },
): CsvTable {
  const { summary } = stats;
  const percentiles = Object.keys(summary).filter((key) => /^p\d+_queue_seconds$/.test(key));
  const columns = [
    'row',
    ...(options.interval ? ['start'] : []),
    ...(options.groupBy === undefined ? [] : [options.groupBy]),
    ...FIGURES,
    ...percentiles,
    ...USAGE,
    ...('currency' in stats ? COST : []),
  ];
  const rows: Record<string, unknown>[] = [
    {
      ...summary,
      row: 'summary',
      workload_count: summary.total_workloads,
      gpu_hours: summary.total_gpu_hours,
      idle_gpu_hours: summary.total_idle_gpu_hours,
      energy_kwh: summary.total_energy_kwh,
      ...('currency' in stats ? { currency: stats.currency, cost: summary.total_cost, idle_cost: summary.total_idle_cost } : {}),
    },
    ...stats.grouped.map((group) => ({ ...group, row: 'group', currency: stats.currency })),
    ...(stats.series ?? []).map((entry) => ({ ...entry, row: 'interval', currency: stats.currency })),
  ];
  return { filename: csvFilename('workload-stats', options.organizationId, options.now), columns, records: [recordsOf(columns, rows)] };
}
