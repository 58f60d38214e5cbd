// Prices from the prices ConfigMaps of the service's namespace, watched live on the home cluster's
// API like the capacity ConfigMaps (docs/capacity.md, "Prices").
import { registerPricesMetrics } from '../admin/prices-metrics.js';
import type { ConfigMap } from '../capacity/organization-configmaps.js';
import type { ReflectorTuning } from '../k8s/cluster-informers.js';
import { ConfigMapWatch } from '../k8s/configmap-watch.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import type { WholeEvent } from '../k8s/objects/resource-event.js';
import { ConfigMapPrices } from '../capacity/configmap-prices.js';
import { Pricing } from '../capacity/pricing.js';
import type { BudgetSource } from '../query/ports.js';
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
  const { config, metrics, clock, delay, parts } = context;
  if (deps.home === undefined || !config.capacity_configmaps_enabled || !config.prices_configmaps_enabled) return undefined;
  const logger = context.logger.child({ component: 'prices' });
  const prices = new ConfigMapPrices({ key: config.prices_configmap_key, logger });
  const watch = new ConfigMapWatch(deps.home.kubeConfig, {
    namespace: config.namespace,
    labelSelector: config.prices_label_selector,
    clock,
    delay,
    logger,
    tuning: deps.tuning,
    onEvent: (event) => {
      if (event.type !== 'PAGE') prices.onEvent(event as WholeEvent<ConfigMap>);
    },
  });
  registerPricesMetrics(metrics.registry, {
    problems: () => prices.problems(),
    tables: () => prices.tables().length,
    synced: () => prices.synced,
  });
  parts.phase('stop sources').add('prices watch', () => watch.stop());
  watch.start();
  return { prices, pricing: new Pricing(prices, deps.budgets), watch, startedAt: clock.now() };
}
