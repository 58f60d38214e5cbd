// Prometheus series of the operators' ConfigMaps (capacity, prices), read at scrape time: which
// ConfigMaps are rejected (alert on it: a broken edit leaves the last valid version in force,
// silently otherwise), how many organizations have a file in force, and whether they were listed.
import type { Registry } from 'prom-client';
import { gaugeFrom } from './collected-metrics.js';

/** One kind's series. Their names are spelled whole so that a grep for one finds where it is made. */
export interface ConfigMapSeries {
  /** The word of the help texts: `prices` gives "1 per prices ConfigMap …". */
  what: string;
  rejected: string;
  synced: string;
  inForce: { name: string; help: string };
}

export const CAPACITY_CONFIGMAP_SERIES: ConfigMapSeries = {
  what: 'capacity', rejected: 'gpucap_capacity_configmap_rejected', synced: 'gpucap_capacity_synced',
  inForce: { name: 'gpucap_capacity_budgets', help: 'Organizations with a budget in force' },
};

export const PRICES_CONFIGMAP_SERIES: ConfigMapSeries = {
  what: 'prices', rejected: 'gpucap_prices_configmap_rejected', synced: 'gpucap_prices_synced',
  inForce: { name: 'gpucap_prices_tables', help: 'Organizations with prices in force' },
};

/** What the series read at each scrape: the kind's source (ConfigMapBudgets, ConfigMapPrices). */
export interface ConfigMapMetricSource {
  problems(): readonly { configMap: string; reason: string }[];
  readonly synced: boolean;
}

export function registerConfigMapMetrics(
  registry: Registry,
  series: ConfigMapSeries,
  source: ConfigMapMetricSource,
  organizationsInForce: () => number,
): void {
  gaugeFrom(
    registry,
    series.rejected,
    `1 per ${series.what} ConfigMap whose current version is not in force, by reason ` +
      '(invalid, missing_key, duplicate_organization); the log line says what is wrong',
    ['configmap', 'reason'],
    () => source.problems().map((p) => ({ labels: { configmap: p.configMap, reason: p.reason }, value: 1 })),
  );
  gaugeFrom(registry, series.inForce.name, series.inForce.help, [], () => [{ labels: {}, value: organizationsInForce() }]);
  gaugeFrom(registry, series.synced, `1 once the ${series.what} ConfigMaps were listed`, [], () => [
    { labels: {}, value: source.synced ? 1 : 0 },
  ]);
}
