// The set of watched clusters, each with its own informers and its own consumer. Clusters come and go
// at runtime (remote kubeconfig files added or removed); one cluster failing never touches another,
// since each has its own reflectors, backoff and connection.
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterStatus } from '../domain/cluster-status.js';
import type { Clock } from '../domain/clock.js';
import { ClusterInformers, type ClusterEventHandler, type Decoding, type ReflectorTuning } from './cluster-informers.js';
import type { K8sLogger } from './kube-object.js';

export interface ClusterSpec {
  id: string;
  kubeConfig: KubeConfig;
  origin: string;
  organizationId?: string;
}

/** A cluster's consumer (its workload indexer); detached after its informers stopped. */
export interface AttachedCluster {
  onEvent: ClusterEventHandler;
  detach(): void | Promise<void>;
}

export interface ClusterManagerOptions {
  namespaces: readonly string[];
  clock: Clock;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  logger: K8sLogger;
  tuning?: ReflectorTuning;
  decoding?: Decoding;
  dependencyWaitMs?: number;
  attach(cluster: { clusterId: string; organizationId?: string }): AttachedCluster;
}

interface Running {
  informers: ClusterInformers;
  attached: AttachedCluster;
}

export class ClusterManager {
  readonly #options: ClusterManagerOptions;
  readonly #clusters = new Map<string, Running>();
  #stopped = false;

  constructor(options: ClusterManagerOptions) {
    this.#options = options;
  }

  /** Starts watching a cluster. Its id must be new. */
  add(spec: ClusterSpec): void {
    if (this.#stopped) throw new Error(`Cannot add cluster "${spec.id}": the cluster manager was stopped`);
    if (this.#clusters.has(spec.id)) throw new Error(`Cannot add cluster "${spec.id}": a cluster with that id is already watched`);
    const { namespaces, clock, delay, logger, tuning, decoding, dependencyWaitMs, attach } = this.#options;
    const attached = attach({ clusterId: spec.id, ...(spec.organizationId === undefined ? {} : { organizationId: spec.organizationId }) });
    const informers = new ClusterInformers(spec.kubeConfig, {
      clusterId: spec.id,
      origin: spec.origin,
      organizationId: spec.organizationId,
      namespaces,
      clock,
      delay,
      logger,
      tuning,
      decoding,
      dependencyWaitMs,
      onEvent: attached.onEvent,
    });
    this.#clusters.set(spec.id, { informers, attached });
    informers.start();
    logger.info({ cluster: spec.id, origin: spec.origin, organizationId: spec.organizationId }, 'Watching cluster');
  }

  /** Stops watching a cluster; its rows stay in the index (history). Resolves once nothing more arrives. */
  async remove(id: string): Promise<void> {
    const running = this.#clusters.get(id);
    if (running === undefined) return;
    this.#clusters.delete(id);
    await running.informers.stop();
    await running.attached.detach();
    this.#options.logger.info({ cluster: id }, 'Stopped watching cluster');
  }

  has(id: string): boolean {
    return this.#clusters.has(id);
  }

  ids(): string[] {
    return [...this.#clusters.keys()];
  }

  /** Informer loops that ended while their cluster is still watched (see Reflector's loopEnded). */
  deadLoops(): { clusterId: string; loop: string; message: string }[] {
    return [...this.#clusters].flatMap(([clusterId, running]) => running.informers.deadLoops().map((dead) => ({ clusterId, ...dead })));
  }

  statuses(): ClusterStatus[] {
    return [...this.#clusters.values()].map((running) => running.informers.status());
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.ids().map((id) => this.remove(id)));
  }
}
