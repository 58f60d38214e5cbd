// Prometheus series of the capacity ConfigMaps, read at scrape time: which ConfigMaps are rejected
// (alert on it: a broken edit leaves the last valid budget in force, silently otherwise) and how many
// organizations have a budget.
import type { Registry } from 'prom-client';
import { gaugeFrom } from './collected-metrics.js';

export interface CapacityMetricSources {
  problems: () => readonly { configMap: string }[];
  budgets: () => number;
  synced: () => boolean;
}

export function registerCapacityMetrics(registry: Registry, sources: CapacityMetricSources): void {
  gaugeFrom(registry, 'gpucap_capacity_configmap_rejected', '1 per capacity ConfigMap whose current version is not in force (invalid, or a second one for its organization)', ['configmap'], () => {
    const counts = new Map<string, number>();
    for (const p of sources.problems()) counts.set(p.configMap, 1);
    return [...counts].map(([configmap, value]) => ({ labels: { configmap }, value }));
  });
  gaugeFrom(registry, 'gpucap_capacity_budgets', 'Organizations with a budget in force', [], () => [{ labels: {}, value: sources.budgets() }]);
  gaugeFrom(registry, 'gpucap_capacity_synced', '1 once the capacity ConfigMaps were listed', [], () => [{ labels: {}, value: sources.synced() ? 1 : 0 }]);
}
