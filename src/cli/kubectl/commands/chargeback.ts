// kubectl gpucap chargeback: a UTC month's statement (GET /v1/chargeback, ORG_ADMIN only). A line per
// team, or per team and user, pool or GPU model; then, as the service's CSV has them, the idle line
// (already in the rows' cost, shown apart), the fleet's unallocated GPU-hours and the total. Amounts
// are in the currency the headers name; without prices there are none, and only the GPU-hours show.
// --csv prints the service's own CSV file, the one finance loads, unchanged.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import type { Column } from '../output/table.js';
import { amount, text } from '../output/units.js';

/** --group-by's names, as the plugin says them elsewhere, and the API's group_by. */
export const CHARGEBACK_GROUPS = { user: 'submitted_by', pool: 'pool_id', model: 'gpu_model' } as const;
export type ChargebackGroupName = keyof typeof CHARGEBACK_GROUPS;

export interface ChargebackOptions {
  month: string;
  by: ChargebackGroupName | undefined;
  shareIdle: boolean;
}

type Amount = number | null;
interface Figures {
  gpu_hours?: number;
  idle_gpu_hours?: number;
  energy_kwh?: number;
  cost?: Amount;
  idle_cost?: Amount;
  energy_cost?: Amount;
  shared_unallocated_cost?: Amount;
  total_cost?: Amount;
}
/** A line of the statement. A figure the line does not have is left out (a blank cell); an amount the API gave as null is "-". */
interface Line extends Figures {
  line: 'row' | 'idle' | 'unallocated' | 'total';
  initiative_id?: string;
  key?: string | null;
}
interface ChargebackBody {
  data: {
    currency: string | null;
    rows: (Required<Figures> & { initiative_id: string; key: string | null })[];
    idle: { gpu_hours: number; cost: Amount };
    unallocated: { gpu_hours: number; cost: Amount; shared: boolean };
    total: Required<Omit<Figures, 'shared_unallocated_cost'>> & { unallocated_cost: Amount };
  };
}

const FIELDS = [
  'line', 'initiative_id', 'key', 'gpu_hours', 'idle_gpu_hours', 'energy_kwh',
  'cost', 'idle_cost', 'energy_cost', 'shared_unallocated_cost', 'total_cost',
] as const satisfies readonly (keyof Line)[];

const queryOf = (options: ChargebackOptions) => ({
  month: options.month,
  group_by: options.by === undefined ? undefined : CHARGEBACK_GROUPS[options.by],
  share_idle: options.shareIdle ? 'true' : undefined,
});

export async function chargebackView(client: ApiClient, options: ChargebackOptions): Promise<View<Line>> {
  const body: ChargebackBody = await client.get('/v1/chargeback', queryOf(options));
  return {
    data: body.data,
    rows: linesOf(body.data),
    columns: columnsOf(body.data, options.by),
    fields: FIELDS.map((field) => [field, (l: Line) => l[field]] as const),
  };
}

/** The statement as the service writes it for Accept: text/csv, byte for byte. */
export async function chargebackCsvView(client: ApiClient, options: ChargebackOptions): Promise<View<Line>> {
  const csv = await client.getText('/v1/chargeback', queryOf(options), 'text/csv');
  return { data: csv, rows: [], columns: [], fields: [], text: csv };
}

function linesOf(c: ChargebackBody['data']): Line[] {
  const { idle, unallocated, total } = c;
  return [
    ...c.rows.map((row): Line => ({ line: 'row', ...row })),
    { line: 'idle', idle_gpu_hours: idle.gpu_hours, idle_cost: idle.cost },
    // Shared, its cost is in the rows' total_cost already.
    { line: 'unallocated', gpu_hours: unallocated.gpu_hours, ...(unallocated.shared ? {} : { total_cost: unallocated.cost }) },
    { line: 'total', ...total, ...(unallocated.shared ? { shared_unallocated_cost: total.unallocated_cost } : {}) },
  ];
}

/** What the team column says on the lines under the rows. */
const labelOf = (l: Line, shared: boolean): string =>
  l.line === 'idle' ? '(idle, in cost)' : l.line === 'total' ? '(total)' : shared ? '(unallocated, shared)' : '(unallocated)';

function columnsOf(c: ChargebackBody['data'], by: ChargebackGroupName | undefined): Column<Line>[] {
  const hours = (value: number | undefined) => (value === undefined ? '' : value.toFixed(1));
  const money = (value: Amount | undefined) => (value === undefined ? '' : amount(value, c.currency ?? ''));
  const figure = (header: string, cell: (l: Line) => string, wide = false): Column<Line> => ({ header, cell, align: 'right', wide });
  const team = (l: Line) => (l.line === 'row' ? text(l.initiative_id) : labelOf(l, c.unallocated.shared));
  const columns: Column<Line>[] = [
    { header: 'TEAM', cell: team, shrink: true },
    ...(by === undefined ? [] : [{ header: by.toUpperCase(), cell: (l: Line) => (l.line === 'row' ? text(l.key) : ''), shrink: true }]),
    figure('GPU-h', (l) => hours(l.gpu_hours)),
    figure('IDLE GPU-h', (l) => hours(l.idle_gpu_hours)),
    figure('kWh', (l) => (l.energy_kwh === undefined ? '' : l.energy_kwh.toFixed(2)), true),
  ];
  if (c.currency === null) return columns;
  // The unit in the header, as capacity does: a currency code in every cell would not fit 100 columns.
  const unit = c.currency;
  return [
    ...columns,
    figure(`COST ${unit}`, (l) => money(l.cost)),
    figure(`IDLE ${unit}`, (l) => money(l.idle_cost)),
    figure(`ENERGY ${unit}`, (l) => money(l.energy_cost), true),
    ...(c.unallocated.shared ? [figure(`SHARED ${unit}`, (l) => money(l.shared_unallocated_cost))] : []),
    figure(`TOTAL ${unit}`, (l) => money(l.total_cost)),
  ];
}
