// Statistics: GET /v1/workloads/stats over a range, grouped and per interval, as a chart and a table;
// for an organization with prices, what the workloads cost too (docs/api.md, Statistics "Cost").
import { apiGet } from '../api.js';
import { timeChart, type ChartSeries } from '../chart.js';
import { STATS_GROUP_KEYS, TREND_INTERVALS, type StatsGroup, type StatsGroupKey, type StatsSeriesEntry, type WorkloadStats } from '../contract.js';
import { statsCostTiles } from '../cost-tiles.js';
import { field, h, select, table, textInput, type Child } from '../dom.js';
import { formatCost, formatDuration, formatGpuHours, formatMoney, formatNumber, formatSeriesStart, formatShare, humanize } from '../format.js';
import { rangePicker } from '../range-picker.js';
import { pick, type PageContext } from '../router.js';
import { filtersForm, meter, section, tiles } from '../ui.js';

const FILTERS = ['time_range', 'start_date', 'end_date', 'group_by', 'initiative_id', 'interval'] as const;
const DEFAULTS = { time_range: 'last_30_days', interval: 'day' };
// A chart of more lines than this is unreadable: the largest groups are drawn, the table has them all.
const CHARTED_GROUPS = 8;

export async function statisticsPage(main: HTMLElement, context: PageContext): Promise<void> {
  context.title('Statistics');
  const { query } = context;
  const value = (name: string) => query.get(name) ?? '';
  // `interval=none` keeps the chart off (the API's default) while the console's default is per day.
  const interval = value('interval') || DEFAULTS.interval;
  const groupBy = (STATS_GROUP_KEYS as readonly string[]).includes(value('group_by')) ? (value('group_by') as StatsGroupKey) : undefined;
  const range = rangePicker(query, DEFAULTS.time_range);
  const form = filtersForm(
    {
      label: 'Range and grouping',
      path: '/statistics',
      defaults: DEFAULTS,
      go: context.go,
      beforeApply: range.clearUnusedDates,
    },
    ...range.fields,
    field('Group by', select('group_by', [['', 'nothing'], ...STATS_GROUP_KEYS.map((k) => [k, humanize(k)] as const)], groupBy ?? '')),
    field('Per', select('interval', [['none', 'whole range'], ...TREND_INTERVALS.map((i) => [i, i] as const)], interval)),
    field('Team (initiative)', textInput('initiative_id', value('initiative_id'))),
  );
  const results = h('div', { class: 'results' });
  main.append(form, results);
  await section(
    results,
    'statistics',
    async () => {
      const params = { ...pick(query, FILTERS, DEFAULTS), interval: interval === 'none' ? undefined : interval };
      const stats = (await apiGet<WorkloadStats>(context.session, '/workloads/stats', params, context.signal)).data;
      return statsView(stats, groupBy, interval);
    },
    context.signal,
  );
}

function statsView(stats: WorkloadStats, groupBy: StatsGroupKey | undefined, interval: string): Child[] {
  const s = stats.summary;
  return [
    tiles([
      ['Workloads', formatNumber(s.total_workloads)],
      ['GPU-hours', formatGpuHours(s.total_gpu_hours)],
      ['Success rate', formatShare(s.success_rate)],
      ['Average duration', formatDuration(s.average_duration_seconds)],
      ['Average queue', formatDuration(s.average_queue_seconds)],
      ['Idle GPU-hours', formatGpuHours(s.total_idle_gpu_hours)],
      ['GPU efficiency', formatShare(s.gpu_efficiency)],
      ['Energy', s.total_energy_kwh === null ? '—' : `${formatNumber(s.total_energy_kwh)} kWh`],
      ...statsCostTiles(stats),
    ]),
    stats.series === undefined ? null : seriesChart(stats.series, groupBy, interval),
    groupBy === undefined ? null : groupsTable(stats.grouped, groupBy, stats.currency),
  ];
}

function seriesChart(series: readonly StatsSeriesEntry[], groupBy: StatsGroupKey | undefined, interval: string): HTMLElement {
  const starts = [...new Set(series.map((e) => e.start))].sort();
  const index = new Map(starts.map((start, i) => [start, i]));
  const common = { x: starts.map((start) => Date.parse(start) / 1000), xLabels: starts.map((start) => formatSeriesStart(start, interval)) };
  if (groupBy === undefined) {
    return timeChart({
      ...common,
      title: `GPU-hours and success rate per ${interval} (UTC), by time of submission`,
      leftLabel: 'GPU-hours',
      rightLabel: 'Success rate (%)',
      series: [
        { label: 'GPU-hours', kind: 'bars', values: series.map((e) => e.gpu_hours), format: (v) => formatGpuHours(v) },
        { label: 'Success rate', kind: 'line', axis: 'right', values: series.map((e) => (e.workload_count === 0 ? null : e.success_rate * 100)), format: (v) => (v === null ? '—' : `${formatNumber(v)} %`) },
      ],
    });
  }
  const totals = new Map<string, number>();
  for (const entry of series) totals.set(groupName(entry, groupBy), (totals.get(groupName(entry, groupBy)) ?? 0) + entry.gpu_hours);
  const charted = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, CHARTED_GROUPS).map(([name]) => name);
  const lines: ChartSeries[] = charted.map((name) => {
    const values: (number | null)[] = starts.map(() => 0);
    for (const entry of series) if (groupName(entry, groupBy) === name) values[index.get(entry.start) ?? 0] = entry.gpu_hours;
    return { label: name, kind: 'line', values, format: (v) => formatGpuHours(v) };
  });
  const more = totals.size - charted.length;
  return timeChart({
    ...common,
    title: `GPU-hours per ${interval} (UTC) by ${humanize(groupBy)}${more > 0 ? `: the ${CHARTED_GROUPS} largest of ${totals.size}` : ''}`,
    leftLabel: 'GPU-hours',
    series: lines,
  });
}

function groupName(group: StatsGroup, key: StatsGroupKey): string {
  return group[key] ?? 'none';
}

function groupsTable(groups: readonly StatsGroup[], groupBy: StatsGroupKey, currency: string | undefined): HTMLElement {
  const top = Math.max(0, ...groups.map((g) => g.gpu_hours));
  const costs = (g: StatsGroup) => (currency === undefined ? [] : [formatCost(g.cost, currency), formatMoney(g.idle_cost, currency)]);
  return table(
    `By ${humanize(groupBy)}, most GPU-hours first`,
    [
      humanize(groupBy), 'Workloads', 'GPU-hours', 'Share of the largest', 'Success rate', 'Average queue', 'Idle GPU-hours', 'GPU efficiency',
      ...(currency === undefined ? [] : ['Cost', 'Idle cost']),
    ],
    groups.map((g) => [
      groupName(g, groupBy),
      formatNumber(g.workload_count),
      formatGpuHours(g.gpu_hours),
      meter(g.gpu_hours, top, `${groupName(g, groupBy)}: ${formatGpuHours(g.gpu_hours)}`),
      formatShare(g.success_rate),
      formatDuration(g.average_queue_seconds),
      formatGpuHours(g.idle_gpu_hours),
      formatShare(g.gpu_efficiency),
      ...costs(g),
    ]),
    { class: 'groups', 'data-rows': groups.length },
  );
}
