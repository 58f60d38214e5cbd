// Workloads ranked by what they cost (sort_by=cost): every pod's GPU time since the first rate,
// priced as a workload's own cost is, summed per workload in the index. A workload that no rate priced
// has no cost to rank by and is left out, as workloads without samples are from the usage rankings.
import { validationError } from '../domain/errors.js';
import type { OrganizationPrices, WorkloadFilter, WorkloadIndex } from './ports.js';
import { rateOfRow, spansOf } from './priced-usage.js';
import { HOUR_MS } from '../domain/trend-interval.js';

export interface CostRanking {
  entries: { workloadId: string; name: string; initiativeId: string; cost: number }[];
  totalCount: number;
  /** Mean cost of the workloads ranked; null when none is. */
  average: number | null;
}

export async function rankByCost(
  index: WorkloadIndex,
  prices: OrganizationPrices | undefined,
  filter: WorkloadFilter,
  options: { order: 'asc' | 'desc'; limit: number; now: number },
): Promise<CostRanking> {
  if (prices === undefined) {
    throw validationError([
      { location: 'query', field: 'sort_by', message: `cost needs prices, and organization "${filter.scope.organizationId}" has none` },
    ]);
  }
  const spans = spansOf({ from: null, to: options.now + 1 }, prices.changes);
  const rows = spans.length === 0 ? [] : await index.pricedUsage(filter, spans, { groupBy: 'workload_id' });
  const costs = new Map<string, number>();
  for (const row of rows) {
    const rate = rateOfRow(row, spans, prices);
    if (rate !== null && row.key !== undefined) costs.set(row.key, (costs.get(row.key) ?? 0) + (row.gpuMs / HOUR_MS) * rate);
  }
  const sign = options.order === 'asc' ? 1 : -1;
  // Ties go to the smaller workload_id in both orders, as in the other rankings.
  const ranked = [...costs].sort(([a, x], [b, y]) => sign * (x - y) || (a < b ? -1 : a > b ? 1 : 0));
  const top = ranked.slice(0, options.limit);
  const described = top.length === 0 ? new Map() : await index.describe(top.map(([id]) => id), filter);
  const total = ranked.reduce((sum, [, cost]) => sum + cost, 0);
  return {
    entries: top.flatMap(([workloadId, cost]) => {
      const about = described.get(workloadId);
      return about === undefined ? [] : [{ workloadId, name: about.name, initiativeId: about.initiativeId, cost }];
    }),
    totalCount: ranked.length,
    average: ranked.length === 0 ? null : total / ranked.length,
  };
}
