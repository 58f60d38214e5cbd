// What the telemetry flow needs from one cluster's pod informer: the dcgm-exporter pods to scrape,
// and for each GPU pod (by namespace and name, as the exporter labels it) the workload it belongs to.
// Fed the same events as the workload indexer; keeps a few strings per GPU pod, nothing more.
import type { ResourceEvent } from '../workloads/workload-sink.js';
import type { Pod } from '../workloads/k8s-types.js';
import { effectiveGpuRequest } from '../workloads/gpu-request.js';
import { jobOwnerUid } from '../workloads/owner.js';
import { exporterUrl, type ExporterDiscovery, type ExporterTarget } from './exporter-target.js';

function podKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class PodDirectory {
  readonly #clusterId: string;
  readonly #discovery: ExporterDiscovery;
  readonly #selectors: readonly (readonly [string, string])[];
  readonly #gpuResources: readonly string[];
  /** namespace/name → workload id, for pods that hold GPUs. */
  readonly #workloadOfPod = new Map<string, string>();
  /** namespace/name → exporter target, for running exporter pods with an IP. */
  readonly #exporters = new Map<string, ExporterTarget>();

  constructor(clusterId: string, options: { discovery: ExporterDiscovery; selectors: readonly (readonly [string, string])[]; gpuResources: readonly string[] }) {
    this.#clusterId = clusterId;
    this.#discovery = options.discovery;
    this.#selectors = options.selectors;
    this.#gpuResources = options.gpuResources;
  }

  onPodEvent(event: ResourceEvent<Pod>, namespace: string | undefined): void {
    if (event.type === 'SYNC') {
      // A namespaced informer's snapshot replaces that namespace only.
      for (const map of [this.#workloadOfPod, this.#exporters] as Map<string, unknown>[]) {
        if (namespace === undefined) map.clear();
        else for (const key of map.keys()) if (key.startsWith(`${namespace}/`)) map.delete(key);
      }
      for (const pod of event.items) this.#put(pod);
      return;
    }
    if (event.type === 'DELETED') this.#remove(event.object);
    else this.#put(event.object);
  }

  workloadOf(namespace: string, pod: string): string | undefined {
    return this.#workloadOfPod.get(podKey(namespace, pod));
  }

  exporters(): IterableIterator<ExporterTarget> {
    return this.#exporters.values();
  }

  get exporterCount(): number {
    return this.#exporters.size;
  }

  get gpuPods(): number {
    return this.#workloadOfPod.size;
  }

  #put(pod: Pod): void {
    const meta = pod.metadata;
    const name = meta?.name;
    const namespace = meta?.namespace;
    if (name === undefined || namespace === undefined) return;
    const key = podKey(namespace, name);
    const uid = meta?.uid;
    if (uid !== undefined && effectiveGpuRequest(pod.spec, this.#gpuResources) > 0) {
      this.#workloadOfPod.set(key, jobOwnerUid(meta) ?? uid);
    } else {
      this.#workloadOfPod.delete(key);
    }
    const ip = pod.status?.podIP;
    if (this.#isExporter(pod) && ip && pod.status?.phase === 'Running' && meta?.deletionTimestamp === undefined) {
      this.#exporters.set(key, {
        key: `${this.#clusterId}/${key}`,
        clusterId: this.#clusterId,
        namespace,
        pod: name,
        node: pod.spec?.nodeName,
        url: exporterUrl(ip, this.#discovery),
      });
    } else {
      this.#exporters.delete(key);
    }
  }

  #remove(pod: Pod): void {
    const name = pod.metadata?.name;
    const namespace = pod.metadata?.namespace;
    if (name === undefined || namespace === undefined) return;
    this.#workloadOfPod.delete(podKey(namespace, name));
    this.#exporters.delete(podKey(namespace, name));
  }

  #isExporter(pod: Pod): boolean {
    const labels = pod.metadata?.labels;
    if (labels === undefined) return false;
    return this.#selectors.some(([key, value]) => labels[key] === value);
  }
}
