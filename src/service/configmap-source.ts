// The operators' files (capacity budgets, prices) come from labelled ConfigMaps of the service's own
// namespace, watched live on the home cluster's API: one watch a kind, stopped with the other sources.
import type { ConfigMap } from '../capacity/organization-configmaps.js';
import type { ReflectorTuning } from '../k8s/cluster-informers.js';
import { ConfigMapWatch } from '../k8s/configmap-watch.js';
import type { K8sLogger } from '../k8s/kube-object.js';
import type { LoadedKubeconfig } from '../k8s/kubeconfig.js';
import type { WholeEvent } from '../k8s/objects/resource-event.js';
import type { ServiceContext } from './service-context.js';

export interface ConfigMapSourceWatch {
  home: LoadedKubeconfig;
  tuning: ReflectorTuning | undefined;
  labelSelector: string;
  logger: K8sLogger;
  /** The watch's name in the 'stop sources' phase, which the stop's logs and tests name. */
  name: string;
}

/** Starts watching the ConfigMaps into `source`. */
export function watchConfigMapsInto(
  context: ServiceContext,
  source: { onEvent(event: WholeEvent<ConfigMap>): void },
  options: ConfigMapSourceWatch,
): ConfigMapWatch {
  const { config, clock, delay, parts } = context;
  const watch = new ConfigMapWatch(options.home.kubeConfig, {
    namespace: config.namespace,
    labelSelector: options.labelSelector,
    clock,
    delay,
    logger: options.logger,
    tuning: options.tuning,
    // The ConfigMap watch takes its LIST whole (no pages): a handful of small objects.
    onEvent: (event) => {
      if (event.type !== 'PAGE') source.onEvent(event as WholeEvent<ConfigMap>);
    },
  });
  parts.phase('stop sources').add(options.name, () => watch.stop());
  watch.start();
  return watch;
}
