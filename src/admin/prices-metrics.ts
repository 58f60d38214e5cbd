// Prometheus series of the prices ConfigMaps, read at scrape time: which ConfigMaps are rejected (a
// broken edit leaves the last valid prices in force, silently otherwise) and how many organizations
// have prices.
import type { Registry } from 'prom-client';
import { gaugeFrom } from './collected-metrics.js';

export interface PricesMetricSources {
  problems: () => readonly { configMap: string; reason: string }[];
  tables: () => number;
  synced: () => boolean;
}

export function registerPricesMetrics(registry: Registry, sources: PricesMetricSources): void {
  gaugeFrom(
    registry,
    'gpucap_prices_configmap_rejected',
    '1 per prices ConfigMap whose current version is not in force, by reason ' +
      '(invalid, missing_key, duplicate_organization); the log line says what is wrong',
    ['configmap', 'reason'],
    () => sources.problems().map((p) => ({ labels: { configmap: p.configMap, reason: p.reason }, value: 1 })),
  );
  gaugeFrom(registry, 'gpucap_prices_tables', 'Organizations with prices in force', [], () => [{ labels: {}, value: sources.tables() }]);
  gaugeFrom(registry, 'gpucap_prices_synced', '1 once the prices ConfigMaps were listed', [], () => [
    { labels: {}, value: sources.synced() ? 1 : 0 },
  ]);
}
