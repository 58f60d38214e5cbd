// Overview: the budgets burning down (organization, pools, teams), each pool against its hardware,
// and the last 30 days; with prices, what the GPU time of each cost.
import { apiGet } from '../api.js';
import { timeChart } from '../chart.js';
import type { Budget, Capacity, WorkloadStats } from '../contract.js';
import { capacityCostTiles, statsCostTiles } from '../cost-tiles.js';
import { h } from '../dom.js';
import { formatDuration, formatGpuHours, formatMoney, formatNumber, formatSeriesStart, formatShare, formatTime } from '../format.js';
import { poolHardware } from '../pool-hardware.js';
import type { PageContext } from '../router.js';
import { budgetRow, section, tiles } from '../ui.js';

export async function overviewPage(main: HTMLElement, context: PageContext): Promise<void> {
  context.title(`Overview of ${context.session.organizationId}`);
  const budgets = h('div');
  const month = h('div');
  main.append(h('section', { 'aria-labelledby': 'budgets-title' }, h('h2', { id: 'budgets-title' }, 'GPU-hour budgets'), budgets));
  main.append(h('section', { 'aria-labelledby': 'month-title' }, h('h2', { id: 'month-title' }, 'Last 30 days'), month));
  await Promise.all([
    section(budgets, 'budgets', async () => capacityView((await apiGet<Capacity>(context.session, '/capacity', {}, context.signal)).data), context.signal),
    section(
      month,
      'the last 30 days',
      async () => monthView((await apiGet<WorkloadStats>(context.session, '/workloads/stats', { time_range: 'last_30_days', interval: 'day' }, context.signal)).data),
      context.signal,
    ),
  ]);
}

function capacityView(capacity: Capacity): HTMLElement[] {
  const s = capacity.summary;
  return [
    tiles([
      ['Active GPUs', formatNumber(s.current_active_gpus)],
      ['Used', formatGpuHours(s.total_used_gpu_hours)],
      ['Remaining', formatGpuHours(s.total_remaining_gpu_hours)],
      ['Burn rate', `${formatNumber(s.burn_rate_gpu_hours_per_day)} GPU-h/day`],
      ['Projected exhaustion', s.projected_exhaustion_at === null ? 'not this period' : formatTime(s.projected_exhaustion_at)],
      ...capacityCostTiles(capacity),
    ]),
    h(
      'ul',
      { class: 'budgets', 'aria-label': 'Total' },
      // The API's summary covers the caller's scope: the whole organization for its admins, their teams otherwise.
      budgetRow(`Total in your scope of ${capacity.organization_id}`, {
        allocated: s.total_allocated_gpu_hours,
        used: s.total_used_gpu_hours,
        remaining: s.total_remaining_gpu_hours,
        burnRate: s.burn_rate_gpu_hours_per_day,
        exhaustion: s.projected_exhaustion_at,
        ...spent(s.total_used_cost, capacity.currency),
      }),
    ),
    h('h3', {}, 'Capacity pools'),
    capacity.pools.length === 0
      ? h('p', { class: 'muted' }, 'No pool in scope.')
      : h(
          'ul',
          { class: 'budgets', 'aria-label': 'Capacity pools' },
          ...capacity.pools.map((p) =>
            budgetRow(`${p.name} (${p.instance_types.join(', ') || 'any instance type'})`, figures(p, capacity.currency), poolHardware(p)),
          ),
        ),
    h('h3', {}, 'Teams'),
    capacity.initiatives.length === 0
      ? h('p', { class: 'muted' }, 'No team in scope.')
      : h('ul', { class: 'budgets', 'aria-label': 'Teams' }, ...capacity.initiatives.map((i) => budgetRow(i.name === i.initiative_id ? i.name : `${i.name} (${i.initiative_id})`, figures(i, capacity.currency)))),
  ];
}

function figures(budget: Budget, currency: string | undefined) {
  return {
    allocated: budget.allocated_gpu_hours,
    used: budget.used_gpu_hours,
    remaining: budget.remaining_gpu_hours,
    burnRate: budget.burn_rate_gpu_hours_per_day,
    exhaustion: budget.projected_exhaustion_at,
    ...spent(budget.used_cost, currency),
  };
}

/** A budget's cost so far, when the API priced it. */
function spent(usedCost: number | undefined, currency: string | undefined): { cost?: string } {
  return usedCost === undefined || currency === undefined ? {} : { cost: formatMoney(usedCost, currency) };
}

function monthView(stats: WorkloadStats): HTMLElement[] {
  const series = stats.series ?? [];
  return [
    tiles([
      ['Workloads', formatNumber(stats.summary.total_workloads)],
      ['GPU-hours', formatGpuHours(stats.summary.total_gpu_hours)],
      ['Success rate', formatShare(stats.summary.success_rate)],
      ['Average duration', formatDuration(stats.summary.average_duration_seconds)],
      ['Average queue', formatDuration(stats.summary.average_queue_seconds)],
      ...statsCostTiles(stats),
    ]),
    timeChart({
      title: 'GPU-hours and success rate per day (UTC), by day of submission',
      x: series.map((e) => Date.parse(e.start) / 1000),
      xLabels: series.map((e) => formatSeriesStart(e.start, 'day')),
      leftLabel: 'GPU-hours',
      rightLabel: 'Success rate (%)',
      series: [
        { label: 'GPU-hours', kind: 'bars', values: series.map((e) => e.gpu_hours), format: (v) => formatGpuHours(v) },
        {
          label: 'Success rate',
          kind: 'line',
          axis: 'right',
          // A day without a finished workload has no rate: a gap, not 0 %.
          values: series.map((e) => (e.workload_count === 0 ? null : e.success_rate * 100)),
          format: (v) => (v === null ? '—' : `${formatNumber(v)} %`),
        },
      ],
    }),
  ];
}
