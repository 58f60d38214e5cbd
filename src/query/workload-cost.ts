// What one workload cost (docs/api.md, "Cost"): each pod's GPU time priced at the rates in force
// while it ran, split where a rate changes, and its energy at the energy rate. A pod ends at its
// finish, else at its workload's completion, else it runs up to now, as every GPU-hour figure counts it.
import type { OrganizationPrices, PodGpuTime } from './ports.js';
import { usageFigures } from '../domain/gpu-usage.js';
import { HOUR_MS } from '../domain/trend-interval.js';
import type { WorkloadView } from '../domain/workload.js';
import { priceInterval } from '../domain/rate-segments.js';

export interface WorkloadCost {
  currency: string;
  minorUnits: number;
  /** null when it used GPU time and no rate priced any of it; 0 when it used none. */
  cost: number | null;
  /** null when energy is not priced or none was measured. */
  energyCost: number | null;
  unpricedGpuHours: number;
}

export function workloadCost(workload: WorkloadView, pods: readonly PodGpuTime[], prices: OrganizationPrices, now: number): WorkloadCost {
  const segments = prices.segments({
    gpuModel: workload.gpuModel ?? null,
    instanceType: workload.instanceType,
    clusterId: workload.clusterId,
    capacityType: workload.capacityType ?? null,
  });
  let cost = 0;
  let unpriced = 0;
  let priced = false;
  for (const pod of pods) {
    const end = pod.finishedAt ?? workload.completedAt ?? now;
    const part = priceInterval(segments, pod.gpus, pod.startedAt, end);
    cost += part.cost;
    unpriced += part.unpricedGpuHours;
    if (end > pod.startedAt && part.unpricedGpuHours < (pod.gpus * (end - pod.startedAt)) / HOUR_MS) priced = true;
  }
  const energy = workload.usage === null ? null : usageFigures(workload.usage, workload.gpuHoursUsed).energyKwh;
  return {
    currency: prices.currency,
    minorUnits: prices.minorUnits,
    // Nothing ran yet: nothing was spent. Something ran and no rate covered any of it: not known.
    cost: priced || unpriced === 0 ? cost : null,
    energyCost: energy === null || prices.energyRatePerKwh === null ? null : energy * prices.energyRatePerKwh,
    unpricedGpuHours: unpriced,
  };
}
