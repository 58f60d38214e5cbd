// One workload: its full record, and its GPU metrics in each window as a range chart (min to max,
// with the average and the current value) and as figures.
import { apiGet } from '../api.js';
import { METRIC_NAMES, METRICS_TIME_RANGES, type GpuSharing, type MetricName, type MetricSummary, type Workload, type WorkloadMetrics } from '../contract.js';
import { h, table } from '../dom.js';
import { formatCost, formatDuration, formatGpuHours, formatMetric, formatMoney, formatNumber, formatShare, formatTime, humanize, METRIC_UNITS } from '../format.js';
import type { PageContext } from '../router.js';
import { link, section, statusBadge } from '../ui.js';

export async function workloadPage(main: HTMLElement, context: PageContext): Promise<void> {
  const id = context.id ?? '';
  context.title(`Workload ${id}`);
  const record = h('div');
  const metrics = h('div');
  main.append(
    h('p', {}, link('/workloads', '← All workloads')),
    h('section', { 'aria-labelledby': 'record-title' }, h('h2', { id: 'record-title' }, 'Record'), record),
    h('section', { 'aria-labelledby': 'metrics-title' }, h('h2', { id: 'metrics-title' }, 'GPU metrics'), metrics),
  );
  const path = `/workloads/${encodeURIComponent(id)}`;
  await Promise.all([
    section(
      record,
      'the workload',
      async () => {
        const workload = (await apiGet<Workload>(context.session, path, {}, context.signal)).data;
        context.title(`Workload ${workload.name}`);
        return recordView(workload);
      },
      context.signal,
    ),
    section(
      metrics,
      'GPU metrics',
      async () => {
        const windows = await Promise.all(METRICS_TIME_RANGES.map((range) => apiGet<WorkloadMetrics>(context.session, `${path}/metrics`, { time_range: range }, context.signal)));
        return [
          h('p', { class: 'muted legend' }, 'Each bar spans the minimum to the maximum of the window; the line marks the average, the dot the current value (the mean of each GPU\'s latest sample).'),
          h('div', { class: 'metrics' }, ...METRIC_NAMES.map((name) => metricView(name, windows.map((w) => [w.data.time_range, w.data.metrics[name]] as const)))),
        ];
      },
      context.signal,
    ),
  ]);
}

function recordView(w: Workload): HTMLElement {
  const rows: [string, string | Node][] = [
    ['Status', statusBadge(w.status)],
    ['Workload ID', w.workload_id],
    ['Team (initiative)', w.initiative_id],
    ['Submitted by', w.submitted_by],
    ['Cluster', w.cluster_id],
    ['Namespace', w.namespace],
    ['Instance type', w.instance_type],
    ['GPUs', String(w.gpu_count)],
    ['GPUs allocated', allocatedView(w)],
    ['GPU model', w.gpu_model ?? '—'],
    ['Managed', w.is_managed ? 'yes' : 'no'],
    ['Submitted', formatTime(w.submitted_at)],
    ['Started', formatTime(w.started_at)],
    ['Completed', formatTime(w.completed_at)],
    ['Queued for', formatDuration(w.queue_seconds)],
    ['Duration', formatDuration(w.duration_seconds)],
    ['GPU-hours used', formatGpuHours(w.gpu_hours_used)],
    ['Exit code', w.exit_code === null ? '—' : String(w.exit_code)],
    ['Failure reason', w.failure_reason ?? '—'],
    ['Idle GPU-hours', formatGpuHours(w.idle_gpu_hours)],
    ['GPU efficiency', formatShare(w.gpu_efficiency)],
    ['Utilization coverage', formatShare(w.utilization_coverage)],
    ['Energy', w.energy_kwh === null ? '—' : `${formatNumber(w.energy_kwh, 2)} kWh`],
    ['Energy coverage', formatShare(w.energy_coverage)],
    ...costRows(w),
  ];
  return h('dl', { class: 'record' }, ...rows.map(([label, value]) => h('div', {}, h('dt', {}, label), h('dd', {}, value))));
}

/**
 * Cost rows, only when the API priced the record (its organization has prices): without them the
 * record has no cost key and the page is as it was. A null cost is GPU time no rate matched, which
 * the API does not guess, so neither does the page.
 */
function costRows(w: Workload): [string, string][] {
  if (!('cost' in w)) return [];
  const currency = w.currency ?? '';
  const rows: [string, string][] = [
    ['Cost', formatCost(w.cost, currency)],
    ['Energy cost', formatMoney(w.energy_cost, currency)],
  ];
  const unpriced = w.unpriced_gpu_hours ?? 0;
  if (unpriced > 0) rows.push(['Unpriced GPU-hours', `${formatNumber(unpriced, 2)} GPU-h`]);
  return rows;
}

/** How a workload's GPUs were counted, in the words of docs/workloads.md ("How GPUs are counted"). */
const SHARING_LABELS: Readonly<Record<GpuSharing, string>> = {
  exclusive: 'whole GPUs',
  mig: 'MIG slices',
  time_slicing: 'time-sliced replicas',
  mps: 'MPS replicas',
  fractional: 'fractions (KAI, HAMi)',
};

/** Whole-GPU equivalents and how they were counted; rows from before shares were counted say only the figure. */
function allocatedView(w: Workload): string {
  const figure = String(Math.round(w.allocated_gpus * 10_000) / 10_000);
  return w.gpu_sharing === null ? figure : `${figure} (${SHARING_LABELS[w.gpu_sharing]})`;
}

const PERCENT_METRICS = new Set<MetricName>(['gpu_utilization', 'memory_utilization', 'gpu_usage']);

function metricView(name: MetricName, windows: readonly (readonly [string, MetricSummary | undefined])[]): HTMLElement {
  const highest = Math.max(0, ...windows.map(([, s]) => s?.max ?? 0));
  const top = PERCENT_METRICS.has(name) ? 100 : highest > 0 ? highest * 1.1 : 1;
  const title = `${humanize(name)} (${METRIC_UNITS[name]})`;
  return h(
    'figure',
    { class: 'metric' },
    h('figcaption', {}, title),
    h(
      'div',
      { class: 'ranges', 'aria-hidden': 'true' },
      ...windows.map(([range, summary]) => h('div', { class: 'range-row' }, h('span', { class: 'range-label' }, humanize(range)), rangeBar(summary, top))),
    ),
    table(
      title,
      ['Window', 'Average', 'Min', 'Max', 'Current'],
      windows.map(([range, s]) => [humanize(range), formatMetric(name, s?.avg), formatMetric(name, s?.min), formatMetric(name, s?.max), formatMetric(name, s?.current)]),
    ),
  );
}

/** min–max as a band, the average as a tick, the current value as a dot, on a scale 0..top. */
function rangeBar(summary: MetricSummary | undefined, top: number): HTMLElement {
  const track = h('span', { class: 'range-track' });
  if (summary === undefined || summary.min === null || summary.max === null) {
    track.append(h('span', { class: 'range-empty' }, 'no samples'));
    return track;
  }
  const at = (value: number) => `${Math.min(100, Math.max(0, (value / top) * 100)).toFixed(2)}%`;
  const band = h('span', { class: 'range-band' });
  band.style.left = at(summary.min);
  band.style.width = `calc(${at(summary.max)} - ${at(summary.min)})`;
  track.append(band);
  if (summary.avg !== null) {
    const tick = h('span', { class: 'range-avg' });
    tick.style.left = at(summary.avg);
    track.append(tick);
  }
  if (summary.current !== null) {
    const dot = h('span', { class: 'range-current' });
    dot.style.left = at(summary.current);
    track.append(dot);
  }
  return track;
}
