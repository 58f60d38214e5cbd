// Where a dcgm-exporter pod is scraped, and which pods count as exporters.

export interface ExporterTarget {
  /** `cluster/namespace/pod`: stable while the pod lives, unique across clusters. */
  key: string;
  clusterId: string;
  namespace: string;
  pod: string;
  /** The exporter pod's spec.nodeName: the node whose GPUs (and pods) it may report. */
  node: string;
  url: string;
}

export interface ExporterDiscovery {
  /** `key=value` label selectors; a pod matching any of them is an exporter. */
  selectors: readonly string[];
  /**
   * The namespaces where an exporter pod is trusted, and scraped: any team may create a pod with the
   * exporters' labels in its own namespace, and what an exporter serves is believed.
   */
  namespaces: readonly string[];
  port: number;
  path: string;
}

/** Parsed `key=value` selectors, checked when the configuration loads. */
export function parseSelectors(selectors: readonly string[]): [string, string][] {
  return selectors.map((selector) => {
    const at = selector.indexOf('=');
    if (at <= 0) throw new Error(`Invalid exporter selector "${selector}": expected key=value`);
    return [selector.slice(0, at), selector.slice(at + 1)];
  });
}

export function exporterUrl(podIp: string, discovery: { port: number; path: string }): string {
  const host = podIp.includes(':') ? `[${podIp}]` : podIp;
  return `http://${host}:${discovery.port}${discovery.path}`;
}
