// What the telemetry flow needs from one cluster's pod informer: the dcgm-exporter pods to scrape,
// and for each GPU pod (by namespace and name, as the exporter labels it) the workload it belongs to;
// from its ResourceClaim informer, the pods each claim is reserved for, for series that name a DRA
// claim and no pod. Fed the same events as the workload indexer; keeps a few strings per GPU pod,
// nothing more: pods by namespace then name (no key string of their own per pod), namespace names and
// the workload ids of a Job's pods shared.
import type { ResourceClaim } from '../../k8s/objects/dra-types.js';
import type { ResourceEvent } from '../../k8s/objects/resource-event.js';
import type { Pod } from '../../k8s/objects/k8s-types.js';
import { effectiveGpuRequest } from '../../k8s/objects/gpu-request.js';
import { jobOwnerUid } from '../../k8s/objects/owner.js';
import { SnapshotPages } from '../../k8s/objects/snapshot-pages.js';
import { StringTable } from '../../k8s/objects/string-table.js';
import { ClaimReservations } from './claim-reservations.js';
import type { GpuReading } from './dcgm-readings.js';
import { exporterUrl, type ExporterDiscovery, type ExporterTarget } from './exporter-target.js';

function podKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * A pod with DRA claims may hold GPUs: whether a claim's devices are GPUs is for the workload
 * indexer to work out (it reads the claims' allocations and the drivers' slices). The directory only
 * needs the pod's workload id ready for when the exporter names the pod or its claim; a claim that
 * holds no GPU costs one map entry and never appears on a GPU's series.
 */
function hasResourceClaims(pod: Pod): boolean {
  return (pod.spec?.resourceClaims?.length ?? 0) > 0;
}

/** What the directory takes from one pod. */
interface PodEntry {
  namespace: string;
  name: string;
  /** Set for a pod that holds GPUs. */
  gpu: { jobUid: string | null; uid: string } | null;
  /** Set for a running exporter pod with an IP. */
  exporter: ExporterTarget | null;
}

export class PodDirectory {
  readonly #clusterId: string;
  readonly #discovery: ExporterDiscovery;
  readonly #selectors: readonly (readonly [string, string])[];
  readonly #gpuResources: readonly string[];
  /** namespace → pod name → workload id, for pods that hold GPUs. */
  readonly #workloadOfPod = new Map<string, Map<string, string>>();
  #gpuPods = 0;
  readonly #namespaces = new StringTable();
  readonly #claims = new ClaimReservations(this.#namespaces);
  /** The workload id of each Job with GPU pods here, one string for all its pods, and how many pods use it. */
  readonly #jobIds = new Map<string, { id: string; pods: number }>();
  readonly #pages = new SnapshotPages<Pod, PodEntry | null>((pod) => this.#entryOf(pod));
  /** namespace/name → exporter target, for running exporter pods with an IP. */
  readonly #exporters = new Map<string, ExporterTarget>();

  constructor(
    clusterId: string,
    options: { discovery: ExporterDiscovery; selectors: readonly (readonly [string, string])[]; gpuResources: readonly string[] },
  ) {
    this.#clusterId = clusterId;
    this.#discovery = options.discovery;
    this.#selectors = options.selectors;
    this.#gpuResources = options.gpuResources;
  }

  onPodEvent(event: ResourceEvent<Pod>, namespace: string | undefined): void {
    if (event.type === 'SYNC' || event.type === 'PAGE') {
      const entries = this.#pages.take(namespace === undefined ? event : { ...event, namespace });
      if (entries === undefined) return;
      // A namespaced informer's snapshot replaces that namespace only.
      for (const name of namespace === undefined ? [...this.#workloadOfPod.keys()] : [namespace]) this.#dropNamespace(name);
      for (const key of this.#exporters.keys()) if (namespace === undefined || key.startsWith(`${namespace}/`)) this.#exporters.delete(key);
      for (const entry of entries) if (entry !== null) this.#put(entry);
      return;
    }
    if (event.type === 'DELETED') this.#remove(event.object);
    else {
      const entry = this.#entryOf(event.object);
      if (entry !== null) this.#put(entry);
    }
  }

  onClaimEvent(event: ResourceEvent<ResourceClaim>, namespace: string | undefined): void {
    this.#claims.onClaimEvent(event, namespace);
  }

  workloadOf(namespace: string, pod: string): string | undefined {
    return this.#workloadOfPod.get(namespace)?.get(pod);
  }

  /**
   * The workload a reading's samples belong to: its pod's, else (a DRA GPU whose series names no pod
   * this directory knows) its claim's.
   */
  workloadOfReading(reading: Pick<GpuReading, 'pod' | 'claim'>): string | undefined {
    const { pod, claim } = reading;
    const byPod = pod === undefined ? undefined : this.workloadOf(pod.namespace, pod.name);
    if (byPod !== undefined || claim === undefined) return byPod;
    return this.workloadOfClaim(claim.namespace, claim.name);
  }

  /**
   * A claim's workload: that of the first pod in its reservedFor that holds a known workload. A claim
   * shared by pods of different workloads goes whole to that first one, not split: every sample of a
   * GPU series feeds one ring and one lifetime total (GpuFleet.record and LifetimeAccumulators.add
   * take one workload id), as a shared GPU exported with pod labels does today (the reader keeps the
   * first pod's series). Splitting would count the GPU's utilization once per sharer, or need shares
   * that neither the exporter nor the claim states. The scheduler appends each pod it schedules to
   * reservedFor, so the first pod, and the attribution, stay put for as long as that pod runs.
   */
  workloadOfClaim(namespace: string, claim: string): string | undefined {
    const pods = this.#workloadOfPod.get(namespace);
    if (pods === undefined) return undefined;
    for (const pod of this.#claims.podsOf(namespace, claim)) {
      const id = pods.get(pod);
      if (id !== undefined) return id;
    }
    return undefined;
  }

  exporters(): IterableIterator<ExporterTarget> {
    return this.#exporters.values();
  }

  get exporterCount(): number {
    return this.#exporters.size;
  }

  get gpuPods(): number {
    return this.#gpuPods;
  }

  /** ResourceClaims reserved for at least one pod. */
  get reservedClaims(): number {
    return this.#claims.size;
  }

  #entryOf(pod: Pod): PodEntry | null {
    const meta = pod.metadata;
    const name = meta?.name;
    const namespace = meta?.namespace;
    if (name === undefined || namespace === undefined) return null;
    const uid = meta?.uid;
    const holdsGpus = effectiveGpuRequest(pod.spec, this.#gpuResources) > 0 || hasResourceClaims(pod);
    const gpu = uid !== undefined && holdsGpus ? { jobUid: jobOwnerUid(meta), uid } : null;
    const ip = pod.status?.podIP;
    const key = podKey(namespace, name);
    const exporter: ExporterTarget | null =
      this.#isExporter(pod) && ip && pod.status?.phase === 'Running' && meta?.deletionTimestamp === undefined
        ? {
          key: `${this.#clusterId}/${key}`,
          clusterId: this.#clusterId,
          namespace,
          pod: name,
          node: pod.spec?.nodeName,
          url: exporterUrl(ip, this.#discovery),
        }
        : null;
    return { namespace, name, gpu, exporter };
  }

  #put(entry: PodEntry): void {
    const { namespace, name, gpu, exporter } = entry;
    if (gpu !== null) this.#setWorkload(namespace, name, gpu.jobUid, gpu.uid);
    else this.#deleteWorkload(namespace, name);
    if (exporter !== null) this.#exporters.set(podKey(namespace, name), exporter);
    else this.#exporters.delete(podKey(namespace, name));
  }

  #remove(pod: Pod): void {
    const name = pod.metadata?.name;
    const namespace = pod.metadata?.namespace;
    if (name === undefined || namespace === undefined) return;
    this.#deleteWorkload(namespace, name);
    this.#exporters.delete(podKey(namespace, name));
  }

  #setWorkload(namespace: string, name: string, jobUid: string | null, uid: string): void {
    let pods = this.#workloadOfPod.get(namespace);
    if (pods === undefined) this.#workloadOfPod.set(this.#namespaces.intern(namespace), (pods = new Map()));
    const previous = pods.get(name);
    let id = uid;
    if (jobUid !== null) {
      if (previous === jobUid) return;
      let shared = this.#jobIds.get(jobUid);
      if (shared === undefined) this.#jobIds.set(jobUid, (shared = { id: jobUid, pods: 0 }));
      shared.pods += 1;
      id = shared.id;
    }
    if (previous === undefined) this.#gpuPods += 1;
    else this.#release(previous);
    pods.set(name, id);
  }

  #deleteWorkload(namespace: string, name: string): void {
    const pods = this.#workloadOfPod.get(namespace);
    const previous = pods?.get(name);
    if (pods === undefined || previous === undefined) return;
    pods.delete(name);
    this.#gpuPods -= 1;
    this.#release(previous);
    if (pods.size === 0) this.#workloadOfPod.delete(namespace);
  }

  #dropNamespace(namespace: string): void {
    const pods = this.#workloadOfPod.get(namespace);
    if (pods === undefined) return;
    for (const id of pods.values()) this.#release(id);
    this.#gpuPods -= pods.size;
    this.#workloadOfPod.delete(namespace);
  }

  /** A pod no longer holds `id`: a Job's shared id goes once its last pod here does. */
  #release(id: string): void {
    const shared = this.#jobIds.get(id);
    if (shared === undefined) return;
    shared.pods -= 1;
    if (shared.pods === 0) this.#jobIds.delete(id);
  }

  #isExporter(pod: Pod): boolean {
    const labels = pod.metadata?.labels;
    if (labels === undefined) return false;
    return this.#selectors.some(([key, value]) => labels[key] === value);
  }
}
