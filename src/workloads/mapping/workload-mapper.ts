// The pure mappers (map-job.ts, map-pod.ts) applied to cached objects: it supplies what a mapping
// reads beyond the object itself, the labels of its Namespace and Node and the cluster's attribution
// settings, so that the indexer only decides what to map and when.
import type { PodGpuInterval } from '../../domain/workload.js';
import type { JobFacts } from '../facts/job-facts.js';
import type { LabelCache } from '../caches/label-cache.js';
import { firstPodNodeName, mapJob } from './map-job.js';
import { mapPod, podInterval } from './map-pod.js';
import type { MappingContext } from './mapping-context.js';
import type { NamespaceInitiatives } from '../../domain/namespace-initiatives.js';
import type { InitiativeSource } from '../attribution/initiative-source.js';
import type { LabelKeys } from '../attribution/label-keys.js';
import type { MappedWorkload } from './mapped-workload.js';
import type { PodFacts } from '../facts/pod-facts.js';
import { podShares, type ClaimShares, type GpuCounting, type PodShares } from './pod-shares.js';

export interface WorkloadMapperOptions {
  clusterId: string;
  clusterOrganizationId?: string;
  defaultOrganizationId: string;
  keys: Readonly<LabelKeys>;
  /** Who decides the initiative (absent: `labels`). */
  initiativeSource?: InitiativeSource;
  gpuResources: readonly string[];
  namespaceInitiatives?: NamespaceInitiatives;
  /** How GPUs are counted; absent: every device whole, as before shares (the tests of other concerns). */
  counting?: GpuCounting;
}

/** When the object was deleted, if the mapping should treat it as deleted (see facts/deletion.ts). */
type Deleted = { at: number } | undefined;

export class WorkloadMapper {
  readonly #namespaces: LabelCache;
  readonly #nodes: LabelCache;
  readonly #options: WorkloadMapperOptions;
  readonly #shares: PodShares | undefined;

  /** `related.claims`: what pods' DRA claims hold (absent: no pod holds any through claims). */
  constructor(related: { namespaces: LabelCache; nodes: LabelCache; claims?: ClaimShares }, options: WorkloadMapperOptions) {
    this.#namespaces = related.namespaces;
    this.#nodes = related.nodes;
    this.#options = options;
    this.#shares = options.counting === undefined ? undefined : podShares(this.#nodes, options.counting, related.claims);
  }

  /** A Job's workload from the Job and its cached pods; null when it requests no GPU. */
  job(job: JobFacts, options: { pods: readonly PodFacts[]; deleted?: Deleted }): MappedWorkload | null {
    const { pods, deleted } = options;
    const context = this.#context(job.namespace, firstPodNodeName(pods), job.observedAt, deleted);
    return mapJob(job, { ...context, pods });
  }

  /** A standalone Pod's workload; null when it requests no GPU (not a workload). */
  standalone(pod: PodFacts, deleted?: Deleted): MappedWorkload | null {
    return mapPod(pod, this.#context(pod.namespace, pod.nodeName, pod.observedAt, deleted));
  }

  /** The GPU interval of a Job's pod on its own, for when the Job itself is not known. */
  podInterval(pod: PodFacts, options: { workloadId: string; observedAt?: number; deleted?: Deleted }): PodGpuInterval {
    return podInterval(pod, { ...options, ...(this.#shares === undefined ? {} : { shares: this.#shares }) });
  }

  #context(namespace: string | undefined, nodeName: string | null | undefined, observedAt: number, deleted: Deleted): MappingContext {
    const { clusterId, clusterOrganizationId, defaultOrganizationId, keys, initiativeSource, gpuResources } = this.#options;
    const { namespaceInitiatives } = this.#options;
    return {
      clusterId,
      clusterOrganizationId,
      defaultOrganizationId,
      namespace: this.#namespaces.get(namespace),
      node: this.#nodes.get(nodeName),
      deleted,
      observedAt,
      keys,
      ...(initiativeSource === undefined ? {} : { initiativeSource }),
      gpuResources,
      ...(namespaceInitiatives === undefined ? {} : { namespaceInitiatives }),
      ...(this.#shares === undefined ? {} : { shares: this.#shares }),
    };
  }
}
