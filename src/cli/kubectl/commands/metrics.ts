// kubectl gpucap metrics ID: each GPU metric of one workload over a window, with its unit.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { celsius, percent, watts } from '../output/units.js';

interface Summary {
  avg: number | null;
  min: number | null;
  max: number | null;
  current: number | null;
}
interface Row extends Summary {
  metric: string;
}

const UNIT: Record<string, (v: number | null) => string> = {
  gpu_utilization: (v) => percent(v),
  memory_utilization: (v) => percent(v),
  gpu_usage: (v) => percent(v),
  temperature: celsius,
  power_usage: watts,
};

export async function metricsView(client: ApiClient, id: string, range: string): Promise<View<Row>> {
  const body: { data: { metrics: Record<string, Summary> } } = await client.get(
    `/v1/workloads/${encodeURIComponent(id)}/metrics`,
    { time_range: range },
  );
  const rows = Object.entries(body.data.metrics).map(([metric, s]) => ({ metric, avg: s.avg, min: s.min, max: s.max, current: s.current }));
  const cell = (pick: (r: Row) => number | null) => (r: Row) => (UNIT[r.metric] ?? percent)(pick(r));
  return {
    data: body.data,
    rows,
    columns: [
      { header: 'METRIC', cell: (r) => r.metric },
      { header: 'AVG', cell: cell((r) => r.avg), align: 'right' },
      { header: 'MIN', cell: cell((r) => r.min), align: 'right' },
      { header: 'MAX', cell: cell((r) => r.max), align: 'right' },
      { header: 'CURRENT', cell: cell((r) => r.current), align: 'right' },
    ],
    fields: [
      ['metric', (r) => r.metric],
      ['avg', (r) => r.avg],
      ['min', (r) => r.min],
      ['max', (r) => r.max],
      ['current', (r) => r.current],
    ],
  };
}
