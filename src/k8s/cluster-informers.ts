// The informers of one cluster: a Reflector each for Namespaces and Nodes (cluster-wide), and for Jobs
// and Pods (cluster-wide, or one per watched namespace). Where the API server serves Dynamic Resource
// Allocation (dra-discovery.ts), also ResourceSlices and DeviceClasses (cluster-wide) and
// ResourceClaims (as Pods are). Jobs and Pods start once the others have synced (or after a short
// wait), so their first mapping already has the labels that attribute them and the devices their
// claims hold, and the index is not written twice for every workload at startup.
import type { KubeConfig } from '@kubernetes/client-node';
import { DRA_RESOURCES, type ClusterStatus, type InformerStatus, type WatchedResource } from '../domain/cluster-status.js';
import type { Clock } from '../domain/clock.js';
import type { FieldSelection } from '../domain/field-selection.js';
import type { ObjectDecoder } from './decode/decoder.js';
import type { K8sLogger, ReflectedObject } from './kube-object.js';
import { Reflector, type ReflectorEvent, type ReflectorOptions } from './reflector.js';
import { Backoff } from './backoff.js';
import { DRA_GROUP, discoverDraVersion, type DraVersion } from './dra-discovery.js';
import { statusCodeOf } from './kube-object.js';

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
  /**
   * Which DRA version the API server serves, null for none; absent: asked of its discovery. A failed
   * discovery is retried with backoff, and the DRA informers start when it answers.
   */
  discoverDra?: (signal: AbortSignal) => Promise<DraVersion | null>;
  /** How often a cluster without resource.k8s.io is asked again (default 10 minutes). */
  draRediscoveryMs?: number;
  /** Where LIST pages and watch streams are parsed, and which fields of each kind are kept. */
  decoding?: Decoding;
  onEvent: ClusterEventHandler;
}

export interface Decoding {
  decoder: ObjectDecoder;
  fields: Readonly<Partial<Record<WatchedResource, FieldSelection>>>;
}

const dra = (version: DraVersion | undefined): string => `/apis/${DRA_GROUP}/${version ?? 'v1'}`;

const PATHS: Record<WatchedResource, (namespace?: string, draVersion?: DraVersion) => string> = {
  namespaces: () => '/api/v1/namespaces',
  nodes: () => '/api/v1/nodes',
  jobs: (namespace) => (namespace === undefined ? '/apis/batch/v1/jobs' : `/apis/batch/v1/namespaces/${namespace}/jobs`),
  pods: (namespace) => (namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${namespace}/pods`),
  resourceclaims: (namespace, version) =>
    (namespace === undefined ? `${dra(version)}/resourceclaims` : `${dra(version)}/namespaces/${namespace}/resourceclaims`),
  resourceslices: (_namespace, version) => `${dra(version)}/resourceslices`,
  deviceclasses: (_namespace, version) => `${dra(version)}/deviceclasses`,
};

/** The collections started before Jobs and Pods, so that mapping them finds what they refer to. */
const CONTEXT_RESOURCES: ReadonlySet<WatchedResource> = new Set(['namespaces', 'nodes', ...DRA_RESOURCES]);

/** How often a server without the group is asked for it again. */
const DRA_REDISCOVERY_MS = 10 * 60_000;

/** How long discovery waits between failed attempts. */
const DISCOVERY_BACKOFF = { baseMs: 1_000, maxMs: 60_000 };

interface Informer {
  resource: WatchedResource;
  namespace?: string;
  reflector: Reflector<ReflectedObject>;
  started: boolean;
}

export class ClusterInformers {
  readonly #options: ClusterInformersOptions;
  readonly #kubeConfig: KubeConfig;
  readonly #informers: Informer[];
  readonly #stop = new AbortController();
  /** The DRA version discovered; undefined until discovery answered (null: the server has no DRA). */
  #draVersion: DraVersion | null | undefined;
  #since = 0;
  /** Why the loop that starts Jobs and Pods ended early, if it did (a bug): they would never start. */
  #starterEnded: string | undefined;

  constructor(kubeConfig: KubeConfig, options: ClusterInformersOptions) {
    this.#options = options;
    this.#kubeConfig = kubeConfig;
    const scopes = this.#scopes();
    const informer = (resource: WatchedResource, namespace?: string): Informer => this.#informer(resource, namespace);
    this.#informers = [
      informer('namespaces'),
      informer('nodes'),
      ...scopes.map((namespace) => informer('jobs', namespace)),
      ...scopes.map((namespace) => informer('pods', namespace)),
    ];
  }

  #scopes(): (string | undefined)[] {
    return this.#options.namespaces.length === 0 ? [undefined] : [...this.#options.namespaces];
  }

  #informer(resource: WatchedResource, namespace?: string, draVersion?: DraVersion): Informer {
    const options = this.#options;
    return {
      resource,
      namespace,
      started: false,
      reflector: new Reflector<ReflectedObject>(this.#kubeConfig, {
        ...options.tuning,
        path: PATHS[resource](namespace, draVersion),
        // Pods, Jobs and claims are most of a cluster: their LISTs reach the consumers page by page.
        pages: resource === 'pods' || resource === 'jobs' || resource === 'resourceclaims',
        decoder: options.decoding?.decoder,
        fields: options.decoding?.fields[resource],
        clock: options.clock,
        delay: options.delay,
        logger: options.logger,
        logContext: { cluster: options.clusterId, resource, ...(namespace === undefined ? {} : { namespace }) },
        onEvent: (event) => options.onEvent(resource, event, namespace),
      }),
    };
  }

  get clusterId(): string {
    return this.#options.clusterId;
  }

  start(): void {
    this.#since = this.#options.clock.now();
    const [first, rest] = partition(this.#informers, (i) => CONTEXT_RESOURCES.has(i.resource));
    for (const informer of first) this.#startOne(informer);
    const discovery = this.#discoverDra().catch((error: unknown) => {
      this.#options.logger.error({ err: error, cluster: this.#options.clusterId }, 'Discovering resource.k8s.io failed');
    });
    this.#startWhenLabelsSynced(rest, discovery).catch((error: unknown) => {
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

  /** The DRA version this cluster serves, null for none, undefined while discovery has not answered. */
  get draVersion(): DraVersion | null | undefined {
    return this.#draVersion;
  }

  /**
   * Asks discovery until it answers, then starts the DRA informers. A server without the group is asked
   * again now and then (an upgrade of the control plane may bring it, and this process outlives it),
   * quietly. A server that forbids the discovery document is taken as one without DRA, said once, and
   * asked again the same way (a fixed ClusterRole takes effect without a restart).
   */
  async #discoverDra(): Promise<void> {
    const { delay, logger, clusterId } = this.#options;
    const signal = this.#stop.signal;
    const backoff = new Backoff({ ...DISCOVERY_BACKOFF, random: this.#options.tuning?.random });
    while (!signal.aborted) {
      try {
        this.#draVersion = await this.#discover(signal);
        break;
      } catch (error) {
        if (signal.aborted) return;
        const status = statusCodeOf(error);
        if (status === 401 || status === 403) {
          logger.warn({ cluster: clusterId, err: error }, 'resource.k8s.io discovery is forbidden: GPUs from DRA claims are not counted');
          this.#draVersion = null;
          break;
        }
        const waitMs = backoff.next();
        logger.warn({ cluster: clusterId, err: error, retryInMs: waitMs }, 'Cannot discover resource.k8s.io yet: retrying');
        await delay(waitMs, signal).catch(() => undefined);
      }
    }
    if (signal.aborted) return;
    if (this.#draVersion === null) void this.#rediscoverDra();
    else if (this.#draVersion !== undefined) this.#startDraInformers(this.#draVersion);
  }

  #discover(signal: AbortSignal): Promise<DraVersion | null> {
    return this.#options.discoverDra?.(signal) ?? discoverDraVersion(this.#kubeConfig, signal);
  }

  /** Asks discovery every DRA_REDISCOVERY_MS until the group is served; a failed attempt waits for the next. */
  async #rediscoverDra(): Promise<void> {
    const { delay, logger, clusterId, draRediscoveryMs = DRA_REDISCOVERY_MS } = this.#options;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      await delay(draRediscoveryMs, signal).catch(() => undefined);
      if (signal.aborted) return;
      const version = await this.#discover(signal).catch((error: unknown) => {
        logger.debug({ cluster: clusterId, err: error }, 'Asking for resource.k8s.io again failed');
        return null;
      });
      if (version === null || signal.aborted) continue;
      this.#draVersion = version;
      this.#startDraInformers(version);
      return;
    }
  }

  #startDraInformers(version: DraVersion): void {
    const added = [
      this.#informer('resourceslices', undefined, version),
      this.#informer('deviceclasses', undefined, version),
      ...this.#scopes().map((namespace) => this.#informer('resourceclaims', namespace, version)),
    ];
    this.#informers.push(...added);
    for (const informer of added) this.#startOne(informer);
    this.#options.logger.info({ cluster: this.#options.clusterId, version: `${DRA_GROUP}/${version}` }, 'Watching DRA claims and slices');
  }

  async #startWhenLabelsSynced(rest: readonly Informer[], discovery: Promise<void>): Promise<void> {
    const { clock, delay, dependencyWaitMs = 10_000 } = this.#options;
    const deadline = clock.now() + dependencyWaitMs;
    const signal = this.#stop.signal;
    let discovered = false;
    void discovery.then(() => {
      discovered = true;
    });
    // The DRA informers join the context once discovery answers, within the same wait.
    const ready = (): boolean => discovered && this.#informers.every((i) => !CONTEXT_RESOURCES.has(i.resource) || i.reflector.synced);
    while (!signal.aborted && clock.now() < deadline && !ready()) {
      await delay(Math.min(50, dependencyWaitMs), signal).catch(() => undefined);
    }
    if (signal.aborted) return;
    if (!ready()) {
      this.#options.logger.warn(
        { cluster: this.#options.clusterId, waitedMs: dependencyWaitMs },
        'Namespaces, Nodes or DRA objects not synced yet: starting Jobs and Pods anyway',
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
