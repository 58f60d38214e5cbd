// The dcgm-exporter pods of one cluster: those to scrape, and those that match the selectors outside
// the trusted namespaces, which are never contacted. The pod informer may watch every namespace, and
// any team can create a pod with the exporters' labels in its own: what such a pod serves would be
// believed (its `pod`/`namespace` labels say whose figures they are), and its pod IP, which its owner
// controls, would be requested every tick. So an exporter outside the trusted namespaces is kept only
// to be counted and logged: no URL is made for it, and nothing it would serve is ever read.
import type { Pod } from '../../k8s/objects/k8s-types.js';
import { exporterUrl, type ExporterDiscovery, type ExporterTarget } from './exporter-target.js';

/** An exporter pod that is not scraped, and why. */
export interface IgnoredExporter {
  /** `cluster/namespace/pod`, as a target's key. */
  key: string;
  clusterId: string;
  namespace: string;
  pod: string;
  node: string;
  podIP: string;
  reason: 'untrusted_namespace';
}

/** What one pod is as an exporter: a target, an ignored one, or (null) no running exporter. */
export type ExporterPod = { target: ExporterTarget; ignored?: undefined } | { target?: undefined; ignored: IgnoredExporter };

export interface ExporterPodsOptions {
  discovery: ExporterDiscovery;
  selectors: readonly (readonly [string, string])[];
  /** Called when an exporter pod outside the trusted namespaces appears (once while it stays one). */
  onIgnored?: (exporter: IgnoredExporter) => void;
}

const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class ExporterPods {
  readonly #clusterId: string;
  readonly #options: ExporterPodsOptions;
  readonly #trusted: ReadonlySet<string>;
  /** namespace/name → target, for running exporter pods with an IP in a trusted namespace. */
  readonly #targets = new Map<string, ExporterTarget>();
  /** namespace/name → the same, outside the trusted namespaces. */
  readonly #ignored = new Map<string, IgnoredExporter>();

  constructor(clusterId: string, options: ExporterPodsOptions) {
    this.#clusterId = clusterId;
    this.#options = options;
    this.#trusted = new Set(options.discovery.namespaces);
  }

  /** What the pod is as an exporter: only a running pod with an IP and a node would be scraped. */
  exporterOf(pod: Pod): ExporterPod | null {
    const meta = pod.metadata;
    const name = meta?.name;
    const namespace = meta?.namespace;
    if (name === undefined || namespace === undefined || !this.#isExporter(pod)) return null;
    const ip = pod.status?.podIP;
    const node = pod.spec?.nodeName;
    if (!ip || !node || pod.status?.phase !== 'Running' || meta?.deletionTimestamp !== undefined) return null;
    const key = `${this.#clusterId}/${podKey(namespace, name)}`;
    if (!this.#trusted.has(namespace)) {
      return { ignored: { key, clusterId: this.#clusterId, namespace, pod: name, node, podIP: ip, reason: 'untrusted_namespace' } };
    }
    return { target: { key, clusterId: this.#clusterId, namespace, pod: name, node, url: exporterUrl(ip, this.#options.discovery) } };
  }

  /** Sets (or, with null, clears) what the pod namespace/name is as an exporter. */
  put(namespace: string, name: string, exporter: ExporterPod | null): void {
    const key = podKey(namespace, name);
    if (exporter?.target !== undefined) this.#targets.set(key, exporter.target);
    else this.#targets.delete(key);
    if (exporter?.ignored === undefined) {
      this.#ignored.delete(key);
      return;
    }
    const known = this.#ignored.has(key);
    this.#ignored.set(key, exporter.ignored);
    if (!known) this.#options.onIgnored?.(exporter.ignored);
  }

  /**
   * A relist of `namespace` (undefined: of every namespace) found these exporter pods there: the others
   * of that scope are gone. Pods ignored before and still there are not announced again.
   */
  replace(namespace: string | undefined, found: readonly { namespace: string; name: string; exporter: ExporterPod }[]): void {
    const seen = new Set(found.map((entry) => podKey(entry.namespace, entry.name)));
    const inScope = (key: string) => namespace === undefined || key.startsWith(`${namespace}/`);
    for (const map of [this.#targets, this.#ignored]) for (const key of map.keys()) if (inScope(key) && !seen.has(key)) map.delete(key);
    for (const entry of found) this.put(entry.namespace, entry.name, entry.exporter);
  }

  targets(): IterableIterator<ExporterTarget> {
    return this.#targets.values();
  }

  ignored(): IterableIterator<IgnoredExporter> {
    return this.#ignored.values();
  }

  get targetCount(): number {
    return this.#targets.size;
  }

  #isExporter(pod: Pod): boolean {
    const labels = pod.metadata?.labels;
    if (labels === undefined) return false;
    return this.#options.selectors.some(([key, value]) => labels[key] === value);
  }
}
