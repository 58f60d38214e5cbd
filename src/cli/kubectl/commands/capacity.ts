// kubectl gpucap capacity: the organization's budget, then each pool and each team, as used/allocated.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { share, text } from '../output/units.js';

interface Budget {
  level: 'organization' | 'pool' | 'initiative';
  id: string;
  allocated: number;
  used: number;
  remaining: number;
  burn: number;
  exhaustion: string | null;
}
interface Figures {
  allocated_gpu_hours: number;
  used_gpu_hours: number;
  remaining_gpu_hours: number;
  burn_rate_gpu_hours_per_day: number;
  projected_exhaustion_at: string | null;
}
interface CapacityBody {
  data: {
    organization_id: string;
    summary: {
      total_allocated_gpu_hours: number;
      total_used_gpu_hours: number;
      total_remaining_gpu_hours: number;
      burn_rate_gpu_hours_per_day: number;
      projected_exhaustion_at: string | null;
    };
    pools: (Figures & { pool_id: string })[];
    initiatives: (Figures & { initiative_id: string })[];
  };
}

const budget = (level: Budget['level'], id: string, f: Figures): Budget => ({
  level,
  id,
  allocated: f.allocated_gpu_hours,
  used: f.used_gpu_hours,
  remaining: f.remaining_gpu_hours,
  burn: f.burn_rate_gpu_hours_per_day,
  exhaustion: f.projected_exhaustion_at,
});

export async function capacityView(
  client: ApiClient,
  options: { pool: string | undefined; team: string | undefined },
): Promise<View<Budget>> {
  const body: CapacityBody = await client.get('/v1/capacity', { pool_id: options.pool, initiative_id: options.team });
  const { summary: s } = body.data;
  const rows = [
    budget('organization', body.data.organization_id, {
      allocated_gpu_hours: s.total_allocated_gpu_hours,
      used_gpu_hours: s.total_used_gpu_hours,
      remaining_gpu_hours: s.total_remaining_gpu_hours,
      burn_rate_gpu_hours_per_day: s.burn_rate_gpu_hours_per_day,
      projected_exhaustion_at: s.projected_exhaustion_at,
    }),
    ...body.data.pools.map((p) => budget('pool', p.pool_id, p)),
    ...body.data.initiatives.map((i) => budget('initiative', i.initiative_id, i)),
  ];
  return {
    data: body.data,
    rows,
    // The unit in the header: six budget figures with "GPU-h" each would not fit 100 columns.
    columns: [
      { header: 'BUDGET', cell: (b) => `${b.level}/${b.id}`, shrink: true },
      { header: 'USED GPU-h', cell: (b) => b.used.toFixed(1), align: 'right' },
      { header: 'ALLOC GPU-h', cell: (b) => b.allocated.toFixed(1), align: 'right' },
      { header: 'USED %', cell: (b) => (b.allocated > 0 ? share(b.used / b.allocated) : '-'), align: 'right' },
      { header: 'LEFT GPU-h', cell: (b) => b.remaining.toFixed(1), align: 'right' },
      { header: 'GPU-h/DAY', cell: (b) => b.burn.toFixed(1), align: 'right' },
      { header: 'EXHAUSTED', cell: (b) => text(b.exhaustion?.slice(0, 10)), align: 'right' },
    ],
    fields: [
      ['level', (b) => b.level],
      ['id', (b) => b.id],
      ['allocated_gpu_hours', (b) => b.allocated],
      ['used_gpu_hours', (b) => b.used],
      ['remaining_gpu_hours', (b) => b.remaining],
      ['burn_rate_gpu_hours_per_day', (b) => b.burn],
      ['projected_exhaustion_at', (b) => b.exhaustion],
    ],
  };
}
