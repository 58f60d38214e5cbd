// A pool's budget against its hardware (capacity_gpu_hours_in_period and over_committed of
// GET /v1/capacity). A budget above what the pool's GPUs can give in the whole period can never be
// used up, so it is marked beside the budget, with both figures.
import type { PoolHardware } from './contract.js';
import { h } from './dom.js';
import { formatGpuHours } from './format.js';

export function poolHardware(pool: PoolHardware & { allocated_gpu_hours: number }): HTMLElement {
  const hardware = pool.capacity_gpu_hours_in_period;
  if (hardware == null) return h('p', { class: 'pool-hardware muted' }, 'Hardware in the period: not counted, the period has no end');
  if (pool.over_committed !== true) return h('p', { class: 'pool-hardware muted' }, `Hardware in the period: ${formatGpuHours(hardware)}`);
  return h(
    'p',
    { class: 'pool-hardware over-committed' },
    h('span', { class: 'badge badge-over-committed' }, 'over-committed'),
    ` budget ${formatGpuHours(pool.allocated_gpu_hours)} against ${formatGpuHours(hardware)} of hardware in the period`,
  );
}
