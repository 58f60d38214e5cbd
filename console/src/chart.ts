// Time charts on uPlot (a 50 KB canvas chart library): bars or lines over UTC days, hours or weeks, on
// one or two value axes, or bars stacked into one column per interval. Each chart comes with its
// figures as a table, which is what screen readers and keyboard users read; the canvas itself is
// hidden from them.
import uPlot from 'uplot';
import { h, table, type Child } from './dom.js';

export interface ChartSeries {
  label: string;
  values: readonly (number | null)[];
  kind: 'bars' | 'line';
  /** The right axis (when a second unit is shown), else the left one. */
  axis?: 'left' | 'right';
  /** A colour of SERIES_COLOURS, for a series that keeps its colour from chart to chart; else by position. */
  colour?: string;
  format(value: number | null): string;
}

export interface TimeChart {
  title: string;
  /** Interval starts, Unix seconds. */
  x: readonly number[];
  xLabels: readonly string[];
  series: readonly ChartSeries[];
  leftLabel: string;
  rightLabel?: string;
  /** Bars stacked in the order given, the first at the bottom: each column adds up to their sum. */
  stacked?: boolean;
}

/** What uPlot draws of a series: its values (running sums, when stacked) in its colour. */
interface Layer {
  series: ChartSeries;
  drawn: (number | null)[];
  colour: string;
}

// Colours of the series on white: every one has 3:1 contrast or more (WCAG 1.4.11, non-text).
export const SERIES_COLOURS = ['#0b5cad', '#b35900', '#1a7f37', '#8250df', '#cf222e', '#1b7c83', '#6e5f00', '#bf3989'];
const AXIS_COLOUR = '#424a53';
const GRID_COLOUR = '#d0d7de';
const HEIGHT = 260;

export function timeChart(chart: TimeChart): HTMLElement {
  const holder = h('div', { class: 'chart', 'aria-hidden': 'true' });
  let plot: uPlot | undefined;
  new ResizeObserver(() => {
    const width = holder.clientWidth;
    if (width === 0) return;
    if (plot === undefined) {
      const drawn = layers(chart);
      plot = new uPlot(options(chart, drawn, width), [chart.x as number[], ...drawn.map((layer) => layer.drawn)], holder);
    } else if (plot.width !== width) {
      plot.setSize({ width, height: HEIGHT });
    }
  }).observe(holder);
  return h(
    'figure',
    { class: 'chart-figure' },
    h('figcaption', {}, chart.title),
    holder,
    h(
      'details',
      {},
      h('summary', {}, 'Figures as a table'),
      table(
        chart.title,
        ['Start', ...chart.series.map((s) => s.label)],
        chart.xLabels.map((label, i): Child[] => [label, ...chart.series.map((s) => s.format(s.values[i] ?? null))]),
      ),
    ),
  );
}

function layers(chart: TimeChart): Layer[] {
  const coloured = chart.series.map((series, i): Layer => ({
    series,
    drawn: [...series.values],
    colour: series.colour ?? SERIES_COLOURS[i % SERIES_COLOURS.length] ?? AXIS_COLOUR,
  }));
  if (chart.stacked !== true) return coloured;
  const sums = chart.x.map(() => 0);
  for (const layer of coloured) {
    layer.drawn = layer.series.values.map((value, i) => (sums[i] = (sums[i] ?? 0) + Math.max(0, value ?? 0)));
  }
  // Each bar rises from 0 to its running sum, so the top layer is drawn first and each lower one over it.
  return coloured.reverse();
}

function options(chart: TimeChart, drawn: readonly Layer[], width: number): uPlot.Options {
  const two = chart.rightLabel !== undefined;
  const bars = uPlot.paths.bars?.({ size: [0.7, 48], align: 0 });
  return {
    width,
    height: HEIGHT,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    scales: { x: { time: true, range: (_self, min, max) => padded(chart.x, min, max) }, left: { auto: true }, ...(two ? { right: { auto: true } } : {}) },
    axes: [
      { stroke: AXIS_COLOUR, grid: { stroke: GRID_COLOUR, width: 1 }, ticks: { stroke: GRID_COLOUR } },
      { scale: 'left', label: chart.leftLabel, stroke: AXIS_COLOUR, grid: { stroke: GRID_COLOUR, width: 1 }, ticks: { stroke: GRID_COLOUR } },
      ...(two ? [{ scale: 'right', side: 1 as const, label: chart.rightLabel, stroke: AXIS_COLOUR, grid: { show: false } }] : []),
    ],
    series: [
      { label: 'Start', value: (_self, _raw, _series, index) => (index === null ? '' : (chart.xLabels[index] ?? '')) },
      ...drawn.map(({ series: s, colour }) => ({
        label: s.label,
        scale: s.axis === 'right' ? 'right' : 'left',
        stroke: colour,
        width: s.kind === 'bars' ? 1 : 2,
        // The series' own figure, not the running sum a stacked layer is drawn at.
        value: (_self: uPlot, _raw: number | null, _series: number, index: number | null) =>
          s.format(index === null ? null : (s.values[index] ?? null)),
        // Stacked layers overlap, so their fill is opaque: a translucent one would blend with the layers under it.
        ...(s.kind === 'bars'
          ? { fill: chart.stacked === true ? colour : `${colour}99`, paths: bars, points: { show: false } }
          : { points: { show: true, size: 5 } }),
      })),
    ],
  };
}

/** The x range widened by half an interval on each side, so the first and last bars show whole. */
function padded(x: readonly number[], min: number, max: number): uPlot.Range.MinMax {
  const step = x.length > 1 ? (x[1] ?? 0) - (x[0] ?? 0) : 3600;
  return [min - step / 2, max + step / 2];
}
