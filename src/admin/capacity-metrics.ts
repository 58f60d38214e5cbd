// Prometheus series of the capacity ConfigMaps, read at scrape time: which ConfigMaps are rejected
// (alert on it: a broken edit leaves the last valid budget in force, silently otherwise) and how many
// organizations have a budget.
import type { Registry } from 'prom-client';
import { gaugeFrom } from './collected-metrics.js';

export interface CapacityMetricSources {
  problems: () => readonly { configMap: string; reason: string }[];
  budgets: () => number;
  synced: () => boolean;
}

export function registerCapacityMetrics(registry: Registry, sources: CapacityMetricSources): void {
  gaugeFrom(
    registry,
    'gpucap_capacity_configmap_rejected',
    '1 per capacity ConfigMap whose current version is not in force, by reason ' +
      '(invalid, missing_key, duplicate_organization); the log line says what is wrong',
    ['configmap', 'reason'],
    () => sources.problems().map((p) => ({ labels: { configmap: p.configMap, reason: p.reason }, value: 1 })),
  );
  gaugeFrom(registry, 'gpucap_capacity_budgets', 'Organizations with a budget in force', [], () => [
    { labels: {}, value: sources.budgets() },
  ]);
  gaugeFrom(registry, 'gpucap_capacity_synced', '1 once the capacity ConfigMaps were listed', [], () => [
    { labels: {}, value: sources.synced() ? 1 : 0 },
  ]);
}
