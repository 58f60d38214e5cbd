// Budgets from the capacity ConfigMaps of the service's namespace, watched live on the home cluster's API.
import { CAPACITY_CONFIGMAP_SERIES, registerConfigMapMetrics } from '../admin/configmap-metrics.js';
import { ConfigMapBudgets } from '../capacity/configmap-budgets.js';
import type { ReflectorTuning } from '../k8s/cluster-informers.js';
import type { ConfigMapWatch } from '../k8s/configmap-watch.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import { watchConfigMapsInto } from './configmap-source.js';
import type { ServiceContext } from './service-context.js';

export interface CapacityRuntime {
  budgets: ConfigMapBudgets;
  watch: ConfigMapWatch;
  startedAt: number;
}

/**
 * The budgets the capacity ConfigMaps give, before they are watched: the indexers map namespaces to
 * initiatives through them. Undefined when the ConfigMaps are off (or there is no home cluster).
 */
export function capacityBudgets(context: ServiceContext, home: LoadedKubeconfig | undefined): ConfigMapBudgets | undefined {
  const { config, logger } = context;
  if (home === undefined || !config.capacity_configmaps_enabled) return undefined;
  return new ConfigMapBudgets({ key: config.capacity_configmap_key, logger: logger.child({ component: 'capacity' }) });
}

/** Watches the ConfigMaps into `budgets`; the watch stops with the other sources. */
export function startCapacity(
  context: ServiceContext,
  deps: { budgets: ConfigMapBudgets; home: LoadedKubeconfig; tuning: ReflectorTuning | undefined },
): CapacityRuntime {
  const { config, metrics, clock } = context;
  const { budgets } = deps;
  registerConfigMapMetrics(metrics.registry, CAPACITY_CONFIGMAP_SERIES, budgets, () => budgets.budgets().length);
  const watch = watchConfigMapsInto(context, budgets, {
    home: deps.home,
    tuning: deps.tuning,
    labelSelector: config.capacity_label_selector,
    logger: context.logger.child({ component: 'capacity' }),
    name: 'capacity watch',
  });
  return { budgets, watch, startedAt: clock.now() };
}
