// The headline costs, as tiles beside the GPU-hours they price. They come only when the API priced
// the answer (the organization has prices, docs/capacity.md "Prices"): an answer without a currency
// gives no tile, and the page reads as it did before prices.
import type { Capacity, WorkloadStats } from './contract.js';
import { formatCost, formatGpuHours, formatMoney } from './format.js';

type Tile = [string, string];

/** What the workloads of a statistics answer cost, and their idle time; the GPU-hours no rate priced, if any. */
export function statsCostTiles(stats: WorkloadStats): Tile[] {
  const { currency, summary: s } = stats;
  if (currency === undefined) return [];
  return [['Cost', formatCost(s.total_cost, currency)], ['Idle cost', formatMoney(s.total_idle_cost, currency)], ...unpriced(s.unpriced_gpu_hours)];
}

/** What the budget period's GPU time cost so far, its burn rate, and what is left of a budget in money. */
export function capacityCostTiles(capacity: Capacity): Tile[] {
  const { currency, summary: s } = capacity;
  if (currency === undefined) return [];
  return [
    ['Cost this period', formatMoney(s.total_used_cost, currency)],
    ['Cost burn rate', `${formatMoney(s.burn_rate_cost_per_day, currency)}/day`],
    // Only a budget that states allocated_cost has money left (or overspent).
    ...(s.total_remaining_cost == null ? [] : [['Budget left', formatMoney(s.total_remaining_cost, currency)] as Tile]),
    ...unpriced(s.unpriced_gpu_hours),
  ];
}

function unpriced(hours: number | undefined): Tile[] {
  return hours === undefined || hours === 0 ? [] : [['Unpriced GPU-hours', formatGpuHours(hours)]];
}
