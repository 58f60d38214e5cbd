// Prices from the prices ConfigMaps of the service's namespace, watched live on the home cluster's
// API like the capacity ConfigMaps (docs/capacity.md, "Prices").
import { PRICES_CONFIGMAP_SERIES, registerConfigMapMetrics } from '../admin/configmap-metrics.js';
import type { ReflectorTuning } from '../k8s/cluster-informers.js';
import type { ConfigMapWatch } from '../k8s/configmap-watch.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import { ConfigMapPrices } from '../capacity/configmap-prices.js';
import { Pricing } from '../capacity/pricing.js';
import type { BudgetSource } from '../query/ports.js';
import { watchConfigMapsInto } from './configmap-source.js';
import type { ServiceContext } from './service-context.js';

export interface PricesRuntime {
  prices: ConfigMapPrices;
  pricing: Pricing;
  watch: ConfigMapWatch;
  startedAt: number;
}

/**
 * Watches the prices ConfigMaps; undefined when they are off (or there is no home cluster). They are
 * the operators' ConfigMaps as the budgets are: capacity_configmaps_enabled=false turns both off.
 */
export function startPrices(
  context: ServiceContext,
  deps: { home: LoadedKubeconfig | undefined; budgets: BudgetSource | undefined; tuning: ReflectorTuning | undefined },
): PricesRuntime | undefined {
  const { config, metrics, clock } = context;
  if (deps.home === undefined || !config.capacity_configmaps_enabled || !config.prices_configmaps_enabled) return undefined;
  const logger = context.logger.child({ component: 'prices' });
  const prices = new ConfigMapPrices({ key: config.prices_configmap_key, logger });
  registerConfigMapMetrics(metrics.registry, PRICES_CONFIGMAP_SERIES, prices, () => prices.tables().length);
  const watch = watchConfigMapsInto(context, prices, {
    home: deps.home,
    tuning: deps.tuning,
    labelSelector: config.prices_label_selector,
    logger,
    name: 'prices watch',
  });
  return { prices, pricing: new Pricing(prices, deps.budgets), watch, startedAt: clock.now() };
}
