// kubectl gpucap top: the workloads ranked by a GPU metric's last-hour average or by GPU-hours.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { gpuHours, percent, watts } from '../output/units.js';

export const TOP_KEYS = ['gpu_utilization', 'memory_utilization', 'power_usage', 'gpu_hours'] as const;
export type TopKey = (typeof TOP_KEYS)[number];

interface Entry {
  workload_id: string;
  name: string;
  initiative_id: string;
  avg?: number;
  current?: number;
  total?: number;
}
interface RankingBody {
  data: {
    workloads: (Omit<Entry, 'avg' | 'current' | 'total'> & Record<string, { avg?: number; current?: number; total?: number }>)[];
    scope_average: Record<string, number | null>;
  };
  metadata: { total_count: number };
}

export async function topView(client: ApiClient, options: { by: TopKey; limit: number; team: string | undefined }): Promise<View<Entry>> {
  const body: RankingBody = await client.get('/v1/workloads/metrics', {
    sort_by: options.by,
    limit: options.limit,
    initiative_id: options.team,
  });
  const rows = body.data.workloads.map((w) => ({
    workload_id: w.workload_id,
    name: w.name,
    initiative_id: w.initiative_id,
    ...w[options.by],
  }));
  const show = options.by === 'gpu_hours' ? gpuHours : options.by === 'power_usage' ? watts : (v: number | null | undefined) => percent(v);
  const figures = options.by === 'gpu_hours'
    ? [{ header: 'GPU-HOURS', cell: (e: Entry) => show(e.total), align: 'right' as const }]
    : [
      { header: 'AVG 1H', cell: (e: Entry) => show(e.avg), align: 'right' as const },
      { header: 'CURRENT', cell: (e: Entry) => show(e.current), align: 'right' as const },
    ];
  return {
    data: body.data,
    rows,
    columns: [
      { header: 'NAME', cell: (e) => e.name, shrink: true },
      { header: 'TEAM', cell: (e) => e.initiative_id, shrink: true },
      ...figures,
      { header: 'WORKLOAD ID', cell: (e) => e.workload_id, wide: true },
    ],
    fields: [
      ['workload_id', (e) => e.workload_id],
      ['name', (e) => e.name],
      ['initiative_id', (e) => e.initiative_id],
      ...(options.by === 'gpu_hours'
        ? [['total', (e: Entry) => e.total] as const]
        : [['avg', (e: Entry) => e.avg] as const, ['current', (e: Entry) => e.current] as const]),
    ],
  };
}
