// kubectl gpucap stats: the summary, then one row per group with --by.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { duration, gpuHours, kwh, share, text } from '../output/units.js';

/** --by's names, as a team lead says them, and the API's group_by. */
export const GROUP_BY = {
  team: 'initiative_id',
  user: 'submitted_by',
  instance_type: 'instance_type',
  failure_reason: 'failure_reason',
} as const;
export type GroupName = keyof typeof GROUP_BY;

interface Figures {
  workload_count: number;
  gpu_hours: number;
  success_rate: number;
  average_queue_seconds: number;
  idle_gpu_hours: number | null;
  gpu_efficiency: number | null;
  energy_kwh: number | null;
}
interface Row extends Figures {
  group: string;
}
interface StatsBody {
  data: {
    summary: Record<string, number | null> & {
      total_workloads: number;
      total_gpu_hours: number;
      success_rate: number;
      average_queue_seconds: number;
    };
    grouped: (Figures & Record<string, unknown>)[];
  };
}

export async function statsView(client: ApiClient, options: { range: string; by: GroupName | undefined }): Promise<View<Row>> {
  const groupBy = options.by === undefined ? undefined : GROUP_BY[options.by];
  const body: StatsBody = await client.get('/v1/workloads/stats', { time_range: options.range, group_by: groupBy });
  const s = body.data.summary;
  const total: Row = {
    group: '(all)',
    workload_count: s.total_workloads,
    gpu_hours: s.total_gpu_hours,
    success_rate: s.success_rate,
    average_queue_seconds: s.average_queue_seconds,
    idle_gpu_hours: s.total_idle_gpu_hours ?? null,
    gpu_efficiency: s.gpu_efficiency ?? null,
    energy_kwh: s.total_energy_kwh ?? null,
  };
  const groups = body.data.grouped.map((g): Row => ({ ...g, group: groupBy === undefined ? '' : text(g[groupBy] as string | null) }));
  const rows = [total, ...groups];
  return {
    data: body.data,
    rows,
    columns: [
      { header: (options.by ?? 'scope').toUpperCase().replace('_', ' '), cell: (r) => r.group, shrink: true },
      { header: 'WORKLOADS', cell: (r) => String(r.workload_count), align: 'right' },
      { header: 'GPU-HOURS', cell: (r) => gpuHours(r.gpu_hours), align: 'right' },
      { header: 'SUCCESS', cell: (r) => share(r.success_rate), align: 'right' },
      { header: 'AVG QUEUE', cell: (r) => duration(r.average_queue_seconds), align: 'right' },
      { header: 'IDLE', cell: (r) => gpuHours(r.idle_gpu_hours), align: 'right' },
      { header: 'EFFICIENCY', cell: (r) => share(r.gpu_efficiency), align: 'right' },
      { header: 'ENERGY', cell: (r) => kwh(r.energy_kwh), align: 'right', wide: true },
    ],
    fields: [
      [groupBy ?? 'scope', (r) => r.group],
      ['workload_count', (r) => r.workload_count],
      ['gpu_hours', (r) => r.gpu_hours],
      ['success_rate', (r) => r.success_rate],
      ['average_queue_seconds', (r) => r.average_queue_seconds],
      ['idle_gpu_hours', (r) => r.idle_gpu_hours],
      ['gpu_efficiency', (r) => r.gpu_efficiency],
      ['energy_kwh', (r) => r.energy_kwh],
    ],
  };
}
