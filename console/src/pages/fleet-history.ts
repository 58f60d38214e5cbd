// The fleet's GPU-hours over a range (`summary` and `series` of GET /v1/fleet by GPU model): what its
// GPUs did, stacked per interval into allocated and busy, allocated and idle, unallocated and
// unavailable, which add up to the GPU-hours the hardware had. One chart for all models, and one per
// model when there are several.
import { timeChart, type ChartSeries } from '../chart.js';
import type { Fleet, FleetHours } from '../contract.js';
import { h, type Child } from '../dom.js';
import { formatGpuHours, formatSeriesStart, formatShare, formatTime } from '../format.js';
import { tiles } from '../ui.js';
import { modelName } from './fleet-now.js';

// More charts than this make a page nobody scrolls through: the largest models are drawn.
const CHARTED_MODELS = 8;

interface StateOfGpus {
  label: string;
  /** Fixed per state (of SERIES_COLOURS), so a state looks the same on every chart. */
  colour: string;
  hours(figures: FleetHours): number;
}

/** Bottom to top of each stacked column. */
const STATES: readonly StateOfGpus[] = [
  // Idle time is part of the allocated time; rounding could make the difference a hair below 0.
  { label: 'Allocated, busy', colour: '#0b5cad', hours: (f) => Math.max(0, f.allocated_gpu_hours - f.idle_gpu_hours) },
  { label: 'Allocated, idle', colour: '#b35900', hours: (f) => f.idle_gpu_hours },
  { label: 'Unallocated', colour: '#1a7f37', hours: (f) => f.unallocated_gpu_hours },
  { label: 'Unavailable', colour: '#cf222e', hours: (f) => f.unavailable_gpu_hours },
];

const ZERO: FleetHours = {
  capacity_gpu_hours: 0,
  unavailable_gpu_hours: 0,
  allocated_gpu_hours: 0,
  idle_gpu_hours: 0,
  unallocated_gpu_hours: 0,
  allocation_rate: null,
  utilization_rate: null,
};

export function fleetHistoryView(fleet: Fleet, interval: string): Child[] {
  const s = fleet.summary;
  const series = fleet.series ?? [];
  const models = fleet.grouped.map((g) => g.key).slice(0, CHARTED_MODELS);
  const chart = (title: string, figures: (entry: (typeof series)[number]) => FleetHours) =>
    timeChart({
      title,
      x: series.map((e) => Date.parse(e.start) / 1000),
      xLabels: series.map((e) => formatSeriesStart(e.start, interval)),
      leftLabel: 'GPU-hours',
      stacked: true,
      series: STATES.map((state): ChartSeries => ({
        label: state.label,
        kind: 'bars',
        colour: state.colour,
        values: series.map((e) => state.hours(figures(e))),
        format: (v) => formatGpuHours(v),
      })),
    });
  return [
    h('p', { class: 'muted' }, `From ${formatTime(fleet.start)} to ${formatTime(fleet.end)}, in whole hours.`),
    tiles([
      ['Capacity', formatGpuHours(s.capacity_gpu_hours)],
      ['Allocated', formatGpuHours(s.allocated_gpu_hours)],
      ['Allocated and idle', formatGpuHours(s.idle_gpu_hours)],
      ['Unallocated', formatGpuHours(s.unallocated_gpu_hours)],
      ['Unavailable', formatGpuHours(s.unavailable_gpu_hours)],
      ['Allocation rate', formatShare(s.allocation_rate)],
      ['Utilization rate', formatShare(s.utilization_rate)],
    ]),
    chart(`All GPU models: GPU-hours per ${interval} (UTC) by state`, (e) => e),
    models.length < 2
      ? null
      : models.map((key) =>
          chart(`${modelName(key)}: GPU-hours per ${interval} (UTC) by state`, (e) => e.grouped?.find((g) => g.key === key) ?? ZERO),
        ),
  ];
}
