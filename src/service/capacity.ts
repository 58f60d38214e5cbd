// Budgets from the capacity ConfigMaps of the service's namespace, watched live on the home cluster's API.
import { registerCapacityMetrics } from '../admin/capacity-metrics.js';
import { ConfigMapBudgets, type ConfigMap } from '../capacity/configmap-budgets.js';
import type { ReflectorTuning } from '../k8s/cluster-informers.js';
import { ConfigMapWatch } from '../k8s/configmap-watch.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import type { WholeEvent } from '../k8s/objects/resource-event.js';
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
  const { config, metrics, clock, delay, parts } = context;
  const { budgets } = deps;
  const watch = new ConfigMapWatch(deps.home.kubeConfig, {
    namespace: config.namespace,
    labelSelector: config.capacity_label_selector,
    clock,
    delay,
    logger: context.logger.child({ component: 'capacity' }),
    tuning: deps.tuning,
    // The ConfigMap watch takes its LIST whole (no pages): a handful of small objects.
    onEvent: (event) => {
      if (event.type !== 'PAGE') budgets.onEvent(event as WholeEvent<ConfigMap>);
    },
  });
  registerCapacityMetrics(metrics.registry, {
    problems: () => budgets.problems(),
    budgets: () => budgets.budgets().length,
    synced: () => budgets.synced,
  });
  parts.phase('stop sources').add('capacity watch', () => watch.stop());
  watch.start();
  return { budgets, watch, startedAt: clock.now() };
}
