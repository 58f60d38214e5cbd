// A month's chargeback as the page shows it (GET /v1/chargeback): its headline figures, then a table
// of the rows (a team, or a team and a value of group_by) with the statement's lines under them, as
// the CSV has them: idle time (already in the rows' cost, shown apart), the fleet's unallocated
// GPU-hours and the total. Without prices the API gives every amount as null: the table keeps the
// GPU-hours and says that no prices are configured, rather than a column of dashes.
import type { Chargeback, ChargebackRow } from '../contract.js';
import { h, table, type Child } from '../dom.js';
import { formatGpuHours, formatMoney, formatNumber, formatTime, humanize } from '../format.js';
import { tiles } from '../ui.js';

/** A column of the statement: its rows' cells, and the cells of the lines under them (blank where a line has no such figure). */
interface Column {
  title: string;
  row(row: ChargebackRow): string;
  idle?: string;
  unallocated?: string;
  total?: string;
}

const kwh = (value: number) => `${formatNumber(value, 2)} kWh`;

export function statementView(c: Chargeback): Child[] {
  return [
    h('p', { class: 'muted' }, `From ${formatTime(c.from)} to ${formatTime(c.to)}`,
      c.complete ? '.' : ': the month is not over, and its figures still grow.'),
    c.currency === null
      ? h('p', { class: 'notice' }, `No prices are configured for ${c.organization_id}: the statement shows GPU-hours only. `,
        'An operator sets them in a prices ConfigMap (docs/capacity.md, "Prices").')
      : null,
    tiles(headline(c)),
    unpricedNote(c),
    statementTable(c),
    h('p', { class: 'muted' }, 'Idle time is part of each row\'s GPU-hours and cost, shown apart. The total cost adds the unallocated line, ',
      'unless it is shared into the rows. ', c.rounding),
  ];
}

function headline(c: Chargeback): [string, string][] {
  const t = c.total;
  if (c.currency === null) {
    return [['GPU-hours', formatGpuHours(t.gpu_hours)], ['Idle GPU-hours', formatGpuHours(t.idle_gpu_hours)],
      ['Unallocated GPU-hours', formatGpuHours(t.unallocated_gpu_hours)]];
  }
  const money = (value: number | null) => formatMoney(value, c.currency ?? '');
  return [['Total cost', money(t.total_cost)], ['GPU-hours', formatGpuHours(t.gpu_hours)], ['Idle cost', money(t.idle_cost)],
    ['Unallocated cost', money(t.unallocated_cost)], ['Currency', c.currency]];
}

/** GPU time no rate priced is billed at nothing: said, so that a low total is not taken at its word. */
function unpricedNote(c: Chargeback): Child {
  if (c.currency === null || c.unpriced_gpu_hours === 0) return null;
  return h('p', { class: 'notice' }, `${formatGpuHours(c.unpriced_gpu_hours)} of the rows' GPU-hours matched no rate: `,
    'they are in the GPU-hours, not in the costs.');
}

function statementTable(c: Chargeback): HTMLElement {
  const columns = columnsOf(c);
  const line = (label: string, cell: (column: Column) => string | undefined) => [label, ...columns.map((column) => cell(column) ?? '')];
  const unallocated = c.unallocated.shared ? 'Unallocated (shared into the rows)' : 'Unallocated (held by no pod)';
  const scope = c.group_by === null ? 'by team' : `by team and ${humanize(c.group_by)}`;
  return table(
    `Chargeback for ${c.month}, ${scope}${c.rows.length === 0 ? ': no GPU time' : ''}`,
    ['Team', ...columns.map((column) => column.title)],
    c.rows.map((row) => [row.initiative_id, ...columns.map((column) => column.row(row))]),
    { class: 'chargeback', 'data-rows': c.rows.length },
    [
      line('Idle (included in cost)', (column) => column.idle),
      line(unallocated, (column) => column.unallocated),
      line('Total', (column) => column.total),
    ],
  );
}

function columnsOf(c: Chargeback): Column[] {
  const hours = formatGpuHours;
  const key: Column[] = c.group_by === null ? [] : [{ title: humanize(c.group_by), row: (r) => r.key ?? 'none' }];
  const figures: Column[] = [
    { title: 'GPU-hours', row: (r) => hours(r.gpu_hours), unallocated: hours(c.unallocated.gpu_hours), total: hours(c.total.gpu_hours) },
    { title: 'Idle GPU-hours', row: (r) => hours(r.idle_gpu_hours), idle: hours(c.idle.gpu_hours), total: hours(c.total.idle_gpu_hours) },
    { title: 'Energy', row: (r) => kwh(r.energy_kwh), total: kwh(c.total.energy_kwh) },
  ];
  if (c.currency === null) return [...key, ...figures];
  const money = (value: number | null) => formatMoney(value, c.currency ?? '');
  const shared: Column[] = c.unallocated.shared
    ? [{ title: 'Shared unallocated cost', row: (r) => money(r.shared_unallocated_cost), total: money(c.total.unallocated_cost) }]
    : [];
  return [
    ...key,
    ...figures,
    { title: 'Cost', row: (r) => money(r.cost), total: money(c.total.cost) },
    { title: 'Idle cost', row: (r) => money(r.idle_cost), idle: money(c.idle.cost), total: money(c.total.idle_cost) },
    { title: 'Energy cost', row: (r) => money(r.energy_cost), total: money(c.total.energy_cost) },
    ...shared,
    {
      title: 'Total cost',
      row: (r) => money(r.total_cost),
      unallocated: c.unallocated.shared ? 'in the rows' : money(c.unallocated.cost),
      total: money(c.total.total_cost),
    },
  ];
}
