// The capacity ConfigMaps of the service's own namespace, by label selector: one reflector (LIST +
// WATCH) on the home cluster's API, with the same resilience as the workload informers. Its events go
// to the capacity source unchanged.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../domain/clock.js';
import type { ReflectedObject, K8sLogger } from './kube-object.js';
import { Reflector, type ReflectorEvent, type ReflectorStatus } from './reflector.js';
import type { ReflectorTuning } from './cluster-informers.js';

export interface ConfigMapWatchOptions {
  namespace: string;
  labelSelector: string;
  clock: Clock;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  logger: K8sLogger;
  tuning?: ReflectorTuning;
  onEvent(event: ReflectorEvent<ReflectedObject>): void;
}

export class ConfigMapWatch {
  readonly #reflector: Reflector<ReflectedObject>;

  constructor(kubeConfig: KubeConfig, options: ConfigMapWatchOptions) {
    this.#reflector = new Reflector<ReflectedObject>(kubeConfig, {
      ...options.tuning,
      path: `/api/v1/namespaces/${options.namespace}/configmaps`,
      labelSelector: options.labelSelector,
      clock: options.clock,
      delay: options.delay,
      logger: options.logger,
      logContext: { resource: 'configmaps', namespace: options.namespace, labelSelector: options.labelSelector },
      onEvent: options.onEvent,
    });
  }

  start(): void {
    this.#reflector.start();
  }

  stop(): Promise<void> {
    return this.#reflector.stop();
  }

  status(): ReflectorStatus {
    return this.#reflector.status();
  }
}
