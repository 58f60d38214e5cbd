// What the telemetry flow needs from one cluster's pod informer: the dcgm-exporter pods to scrape
// (exporter-pods.ts), and for each GPU pod (by namespace and name, as the exporter labels it) the
// workload it belongs to and the node it runs on; from its ResourceClaim informer, the pods each claim
// is reserved for, for series that name a DRA claim and no pod. Fed the same events as the workload
// indexer; keeps a few strings per GPU pod, nothing more: pods by namespace then name (no key string of
// their own per pod), namespace and node names and the workload ids of a Job's pods shared.
//
// A sample counts for a pod's workload only when the exporter runs on the pod's node: dcgm-exporter
// reports the GPUs of its own node, so a series naming a pod elsewhere is a mistake or a forgery, and
// counts for nobody (docs/telemetry.md, "Trust").
import type { ResourceClaim } from '../../k8s/objects/dra-types.js';
import type { ResourceEvent } from '../../k8s/objects/resource-event.js';
import type { Pod } from '../../k8s/objects/k8s-types.js';
import { effectiveGpuRequest } from '../../k8s/objects/gpu-request.js';
import { jobOwnerUid } from '../../k8s/objects/owner.js';
import { SnapshotPages } from '../../k8s/objects/snapshot-pages.js';
import { StringTable } from '../../k8s/objects/string-table.js';
import { ClaimReservations } from './claim-reservations.js';
import type { ClaimRef, GpuReading, PodRef } from './dcgm-readings.js';
import type { ExporterDiscovery, ExporterTarget } from './exporter-target.js';
import { ExporterPods, type ExporterPod, type IgnoredExporter } from './exporter-pods.js';

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
  gpu: { jobUid: string | null; uid: string; node: string | undefined } | null;
  /** Set for a running exporter pod with an IP, trusted or not. */
  exporter: ExporterPod | null;
}

/** A GPU pod's workload, and its node (undefined while it is not scheduled). */
interface Placement {
  workload: string;
  node: string | undefined;
}

/**
 * A reading whose pod (named by the series, or reserved for its claim) is known and does not run on
 * the exporter's node (or on none yet): its samples count for nobody.
 */
export interface OffNodeReading {
  reason: 'other_node';
  pod: PodRef;
  podNode: string | undefined;
  /** The claim that led to the pod, when the series named no pod the directory knows. */
  claim: ClaimRef | undefined;
}

/** Whom a reading's samples count for: a workload id, nobody known (undefined), or nobody because its pod is elsewhere. */
export type ReadingAttribution = string | OffNodeReading | undefined;

export interface PodDirectoryOptions {
  discovery: ExporterDiscovery;
  selectors: readonly (readonly [string, string])[];
  gpuResources: readonly string[];
  /** Called once when an exporter pod outside the trusted namespaces appears (it is never scraped). */
  onExporterIgnored?: (exporter: IgnoredExporter) => void;
}

export class PodDirectory {
  readonly #gpuResources: readonly string[];
  /** namespace → pod name → workload and node, for pods that hold GPUs. */
  readonly #placements = new Map<string, Map<string, Placement>>();
  #gpuPods = 0;
  readonly #namespaces = new StringTable();
  readonly #nodes = new StringTable();
  readonly #claims = new ClaimReservations(this.#namespaces);
  /** The workload id of each Job with GPU pods here, one string for all its pods, and how many pods use it. */
  readonly #jobIds = new Map<string, { id: string; pods: number }>();
  readonly #pages = new SnapshotPages<Pod, PodEntry | null>((pod) => this.#entryOf(pod));
  readonly #exporters: ExporterPods;

  constructor(clusterId: string, options: PodDirectoryOptions) {
    this.#gpuResources = options.gpuResources;
    this.#exporters = new ExporterPods(clusterId, {
      discovery: options.discovery,
      selectors: options.selectors,
      ...(options.onExporterIgnored === undefined ? {} : { onIgnored: options.onExporterIgnored }),
    });
  }

  onPodEvent(event: ResourceEvent<Pod>, namespace: string | undefined): void {
    if (event.type === 'SYNC' || event.type === 'PAGE') {
      const entries = this.#pages.take(namespace === undefined ? event : { ...event, namespace });
      if (entries === undefined) return;
      // A namespaced informer's snapshot replaces that namespace only.
      for (const name of namespace === undefined ? [...this.#placements.keys()] : [namespace]) this.#dropNamespace(name);
      const exporters: { namespace: string; name: string; exporter: ExporterPod }[] = [];
      for (const entry of entries) {
        if (entry === null) continue;
        if (entry.gpu !== null) this.#setPlacement(entry.namespace, entry.name, entry.gpu);
        if (entry.exporter !== null) exporters.push({ namespace: entry.namespace, name: entry.name, exporter: entry.exporter });
      }
      this.#exporters.replace(namespace, exporters);
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
    return this.#placements.get(namespace)?.get(pod)?.workload;
  }

  /**
   * Whom the samples of a reading from the exporter on `node` count for: its pod's workload, else (a
   * DRA GPU whose series names no pod this directory knows) its claim's; in either case only if that
   * pod runs on `node`. Allocates nothing unless the pod is elsewhere.
   */
  attributionOf(reading: Pick<GpuReading, 'pod' | 'claim'>, node: string): ReadingAttribution {
    const { pod, claim } = reading;
    const placed = pod === undefined ? undefined : this.#placements.get(pod.namespace)?.get(pod.name);
    if (pod !== undefined && placed !== undefined) return placed.node === node ? placed.workload : offNode(pod, placed.node, undefined);
    if (claim === undefined) return undefined;
    return this.attributionOfClaim(claim, node);
  }

  /**
   * A claim's workload: that of the first pod in its reservedFor that holds a known workload. A claim
   * shared by pods of different workloads goes whole to that first one, not split: every sample of a
   * GPU series feeds one ring and one lifetime total (GpuFleet.record and LifetimeAccumulators.add
   * take one workload id), as a shared GPU exported with pod labels does today (the reader keeps the
   * first pod's series). Splitting would count the GPU's utilization once per sharer, or need shares
   * that neither the exporter nor the claim states. The scheduler appends each pod it schedules to
   * reservedFor, so the first pod, and the attribution, stay put for as long as that pod runs. The
   * scheduler reserves a claim only for pods on the node of its devices, so that pod runs on the
   * node of the exporter reporting the claim's GPU, or the sample counts for nobody.
   */
  attributionOfClaim(claim: ClaimRef, node: string): ReadingAttribution {
    const pods = this.#placements.get(claim.namespace);
    if (pods === undefined) return undefined;
    for (const pod of this.#claims.podsOf(claim.namespace, claim.name)) {
      const placed = pods.get(pod);
      if (placed === undefined) continue;
      return placed.node === node ? placed.workload : offNode({ namespace: claim.namespace, name: pod }, placed.node, claim);
    }
    return undefined;
  }

  /** The exporter pods to scrape: running, with an IP, in a trusted namespace. */
  exporters(): IterableIterator<ExporterTarget> {
    return this.#exporters.targets();
  }

  /** Exporter pods that would be scraped but are outside the trusted namespaces. */
  ignoredExporters(): IterableIterator<IgnoredExporter> {
    return this.#exporters.ignored();
  }

  get exporterCount(): number {
    return this.#exporters.targetCount;
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
    const gpu = uid !== undefined && holdsGpus ? { jobUid: jobOwnerUid(meta), uid, node: pod.spec?.nodeName } : null;
    return { namespace, name, gpu, exporter: this.#exporters.exporterOf(pod) };
  }

  #put(entry: PodEntry): void {
    const { namespace, name, gpu, exporter } = entry;
    if (gpu !== null) this.#setPlacement(namespace, name, gpu);
    else this.#deletePlacement(namespace, name);
    this.#exporters.put(namespace, name, exporter);
  }

  #remove(pod: Pod): void {
    const name = pod.metadata?.name;
    const namespace = pod.metadata?.namespace;
    if (name === undefined || namespace === undefined) return;
    this.#deletePlacement(namespace, name);
    this.#exporters.put(namespace, name, null);
  }

  #setPlacement(namespace: string, name: string, gpu: { jobUid: string | null; uid: string; node: string | undefined }): void {
    let pods = this.#placements.get(namespace);
    if (pods === undefined) this.#placements.set(this.#namespaces.intern(namespace), (pods = new Map()));
    const previous = pods.get(name);
    const node = this.#nodes.intern(gpu.node);
    let id = gpu.uid;
    if (gpu.jobUid !== null) {
      if (previous?.workload === gpu.jobUid) {
        // Scheduled, or moved: the same workload on (now) another node.
        previous.node = node;
        return;
      }
      let shared = this.#jobIds.get(gpu.jobUid);
      if (shared === undefined) this.#jobIds.set(gpu.jobUid, (shared = { id: gpu.jobUid, pods: 0 }));
      shared.pods += 1;
      id = shared.id;
    }
    if (previous === undefined) this.#gpuPods += 1;
    else this.#release(previous.workload);
    pods.set(name, { workload: id, node });
  }

  #deletePlacement(namespace: string, name: string): void {
    const pods = this.#placements.get(namespace);
    const previous = pods?.get(name);
    if (pods === undefined || previous === undefined) return;
    pods.delete(name);
    this.#gpuPods -= 1;
    this.#release(previous.workload);
    if (pods.size === 0) this.#placements.delete(namespace);
  }

  #dropNamespace(namespace: string): void {
    const pods = this.#placements.get(namespace);
    if (pods === undefined) return;
    for (const placed of pods.values()) this.#release(placed.workload);
    this.#gpuPods -= pods.size;
    this.#placements.delete(namespace);
  }

  /** A pod no longer holds `id`: a Job's shared id goes once its last pod here does. */
  #release(id: string): void {
    const shared = this.#jobIds.get(id);
    if (shared === undefined) return;
    shared.pods -= 1;
    if (shared.pods === 0) this.#jobIds.delete(id);
  }
}

function offNode(pod: PodRef, podNode: string | undefined, claim: ClaimRef | undefined): OffNodeReading {
  return { reason: 'other_node', pod, podNode, claim };
}
