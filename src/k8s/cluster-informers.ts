// The informers of one cluster: a Reflector each for Namespaces and Nodes (cluster-wide), and for Jobs
// and Pods (cluster-wide, or one per watched namespace). Jobs and Pods start once Namespaces and Nodes
// have synced (or after a short wait), so their first mapping already has the labels that attribute
// them and the index is not written twice for every workload at startup.
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterStatus, InformerStatus, WatchedResource } from '../domain/cluster-status.js';
import type { Clock } from '../domain/clock.js';
import type { FieldSelection } from '../domain/field-selection.js';
import type { ObjectDecoder } from './decode/decoder.js';
import type { K8sLogger, ReflectedObject } from './kube-object.js';
import { Reflector, type ReflectorEvent, type ReflectorOptions } from './reflector.js';

/** Where one cluster's events go; `namespace` is set when the collection is watched in one namespace only. */
export type ClusterEventHandler = (
  resource: WatchedResource,
  event: ReflectorEvent<ReflectedObject>,
  namespace: string | undefined,
) => void;

/** Reflector settings shared by every cluster; tests shorten the timeouts. */
export type ReflectorTuning = Pick<
  ReflectorOptions<ReflectedObject>,
  'pageSize' | 'random' | 'watchTimeoutSeconds' | 'stallTimeoutMs' | 'listTimeoutMs' | 'backoff'
>;

export interface ClusterInformersOptions {
  clusterId: string;
  origin: string;
  organizationId?: string;
  /** Namespaces whose Jobs and Pods are watched; empty: all. */
  namespaces: readonly string[];
  /** How long Jobs and Pods wait for Namespaces and Nodes to sync before starting anyway (default 10 s). */
  dependencyWaitMs?: number;
  clock: Clock;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  logger: K8sLogger;
  tuning?: ReflectorTuning;
  /** Where LIST pages and watch streams are parsed, and which fields of each kind are kept. */
  decoding?: Decoding;
  onEvent: ClusterEventHandler;
}

export interface Decoding {
  decoder: ObjectDecoder;
  fields: Readonly<Partial<Record<WatchedResource, FieldSelection>>>;
}

const PATHS: Record<WatchedResource, (namespace?: string) => string> = {
  namespaces: () => '/api/v1/namespaces',
  nodes: () => '/api/v1/nodes',
  jobs: (namespace) => (namespace === undefined ? '/apis/batch/v1/jobs' : `/apis/batch/v1/namespaces/${namespace}/jobs`),
  pods: (namespace) => (namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${namespace}/pods`),
};

interface Informer {
  resource: WatchedResource;
  namespace?: string;
  reflector: Reflector<ReflectedObject>;
  started: boolean;
}

export class ClusterInformers {
  readonly #options: ClusterInformersOptions;
  readonly #informers: Informer[];
  readonly #stop = new AbortController();
  #since = 0;
  /** Why the loop that starts Jobs and Pods ended early, if it did (a bug): they would never start. */
  #starterEnded: string | undefined;

  constructor(kubeConfig: KubeConfig, options: ClusterInformersOptions) {
    this.#options = options;
    const scopes = options.namespaces.length === 0 ? [undefined] : options.namespaces;
    const informer = (resource: WatchedResource, namespace?: string): Informer => ({
      resource,
      namespace,
      started: false,
      reflector: new Reflector<ReflectedObject>(kubeConfig, {
        ...options.tuning,
        path: PATHS[resource](namespace),
        // Pods and Jobs are most of a cluster: their LISTs reach the consumers page by page.
        pages: resource === 'pods' || resource === 'jobs',
        decoder: options.decoding?.decoder,
        fields: options.decoding?.fields[resource],
        clock: options.clock,
        delay: options.delay,
        logger: options.logger,
        logContext: { cluster: options.clusterId, resource, ...(namespace === undefined ? {} : { namespace }) },
        onEvent: (event) => options.onEvent(resource, event, namespace),
      }),
    });
    this.#informers = [
      informer('namespaces'),
      informer('nodes'),
      ...scopes.map((namespace) => informer('jobs', namespace)),
      ...scopes.map((namespace) => informer('pods', namespace)),
    ];
  }

  get clusterId(): string {
    return this.#options.clusterId;
  }

  start(): void {
    this.#since = this.#options.clock.now();
    const [first, rest] = partition(this.#informers, (i) => i.resource === 'namespaces' || i.resource === 'nodes');
    for (const informer of first) this.#startOne(informer);
    this.#startWhenLabelsSynced(first, rest).catch((error: unknown) => {
      this.#starterEnded = error instanceof Error ? error.message : String(error);
      this.#options.logger.error({ err: error, cluster: this.#options.clusterId }, 'Starting the Jobs and Pods informers failed');
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#informers.map((informer) => informer.reflector.stop()));
  }

  /** Every informer that was started has synced once. */
  get synced(): boolean {
    return this.#informers.every((informer) => informer.reflector.synced);
  }

  /** Loops of this cluster that ended while they should run: each one's informer is stale for good. */
  deadLoops(): { loop: string; message: string }[] {
    const dead = this.#informers.flatMap((informer) => {
      const ended = informer.reflector.status().loopEnded;
      return ended === undefined
        ? []
        : [
          {
            loop: informer.namespace === undefined ? informer.resource : `${informer.resource} in ${informer.namespace}`,
            message: ended.message,
          },
        ];
    });
    if (this.#starterEnded !== undefined) dead.push({ loop: 'start of the Jobs and Pods informers', message: this.#starterEnded });
    return dead;
  }

  status(): ClusterStatus {
    const { clusterId, origin, organizationId } = this.#options;
    return {
      clusterId,
      origin,
      ...(organizationId === undefined ? {} : { organizationId }),
      since: this.#since,
      informers: this.#informers.map(informerStatus),
    };
  }

  async #startWhenLabelsSynced(first: readonly Informer[], rest: readonly Informer[]): Promise<void> {
    const { clock, delay, dependencyWaitMs = 10_000 } = this.#options;
    const deadline = clock.now() + dependencyWaitMs;
    const signal = this.#stop.signal;
    while (!signal.aborted && clock.now() < deadline && !first.every((i) => i.reflector.synced)) {
      await delay(Math.min(50, dependencyWaitMs), signal).catch(() => undefined);
    }
    if (signal.aborted) return;
    if (!first.every((i) => i.reflector.synced)) {
      this.#options.logger.warn(
        { cluster: this.#options.clusterId, waitedMs: dependencyWaitMs },
        'Namespaces or Nodes not synced yet: starting Jobs and Pods anyway',
      );
    }
    for (const informer of rest) this.#startOne(informer);
  }

  #startOne(informer: Informer): void {
    if (this.#stop.signal.aborted) return;
    informer.started = true;
    informer.reflector.start();
  }
}

function informerStatus(informer: Informer): InformerStatus {
  const status = informer.reflector.status();
  const { lastError } = status;
  return {
    resource: informer.resource,
    ...(informer.namespace === undefined ? {} : { namespace: informer.namespace }),
    synced: status.synced,
    failing: status.failing,
    ...(lastError === undefined ? {} : { lastError: { message: lastError.message, statusCode: lastError.statusCode, at: lastError.at } }),
    relists: status.relists,
    restarts: status.restarts,
    events: { added: status.eventsByType.ADDED, modified: status.eventsByType.MODIFIED, deleted: status.eventsByType.DELETED },
    ...(status.watchAgeMs === undefined ? {} : { watchAgeMs: status.watchAgeMs }),
    started: informer.started,
  };
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}
