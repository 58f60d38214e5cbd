// GET /v1/chargeback as CSV, the form finance loads: a record per row, then the idle line (its amounts
// are already in the rows' cost: it is there to be seen, not added), the unallocated line and the
// total, `line` saying which. Summed down, the rows and the unallocated line give the total line in
// every money column, to the minor unit. The file is named after the month it bills, not the time of
// the request, so that a month's statement keeps its name when it is fetched again.
import type { PresentedChargeback } from '../chargeback-presenter.js';
import { recordsOf, type CsvTable } from './csv-table.js';

const COLUMNS = [
  'line', 'month', 'currency', 'initiative_id', 'key', 'gpu_hours', 'cost', 'energy_kwh', 'energy_cost', 'idle_gpu_hours', 'idle_cost',
  'shared_unallocated_cost', 'unallocated_gpu_hours', 'unallocated_cost', 'total_cost', 'unpriced_gpu_hours',
] as const;

export function chargebackCsv(c: PresentedChargeback): CsvTable {
  const common = { month: c.month, currency: c.currency };
  const { unallocated, total } = c;
  const rows: Record<string, unknown>[] = [
    ...c.rows.map((row) => ({ ...common, ...row, line: 'row' })),
    { ...common, line: 'idle (included in cost)', idle_gpu_hours: c.idle.gpu_hours, idle_cost: c.idle.cost },
    {
      ...common,
      line: unallocated.shared ? 'unallocated (shared into the rows)' : 'unallocated',
      unallocated_gpu_hours: unallocated.gpu_hours,
      unallocated_cost: unallocated.cost,
      // Shared, it is in the rows' total_cost already.
      total_cost: unallocated.cost === null ? null : unallocated.shared ? 0 : unallocated.cost,
    },
    { ...common, ...total, line: 'total', unpriced_gpu_hours: c.unpriced_gpu_hours },
  ];
  const organization = c.organization_id.replace(/[^A-Za-z0-9._-]/g, '_');
  return { filename: `chargeback-${organization}-${c.month}.csv`, columns: COLUMNS, records: [recordsOf(COLUMNS, rows)] };
}
