// A stand-in for kube-state-metrics, serving only `kube_pod_owner` for the benchmark's GPU pods: the
// series a Prometheus user joins dcgm-exporter's `pod` label with to group GPUs by Job, since the
// exporter knows pods, not workloads. Same labels and values as kube-state-metrics 2.x: a Job-owned
// pod names its Job; a bare pod has owner_kind and owner_name "<none>". Served from this process: one
// small cached text per scrape interval, next to nothing beside the exporters' traffic.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';

export interface KubeStateMetrics {
  /** host:port to scrape. */
  address: string;
  series: number;
  close(): Promise<void>;
}

export async function startKubeStateMetrics(pods: readonly Pod[]): Promise<KubeStateMetrics> {
  const text = renderPodOwners(pods);
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    series: pods.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function renderPodOwners(pods: readonly Pod[]): string {
  let text = '# HELP kube_pod_owner Information about the Pod\'s owner.\n# TYPE kube_pod_owner gauge\n';
  for (const pod of pods) {
    const meta = pod.metadata;
    const owner = meta?.ownerReferences?.[0];
    const labels = [
      `namespace="${meta?.namespace ?? ''}"`,
      `pod="${meta?.name ?? ''}"`,
      `uid="${meta?.uid ?? ''}"`,
      `owner_kind="${owner?.kind ?? '<none>'}"`,
      `owner_name="${owner?.name ?? '<none>'}"`,
      `owner_is_controller="${owner === undefined ? '<none>' : String(owner.controller === true)}"`,
    ];
    text += `kube_pod_owner{${labels.join(',')}} 1\n`;
  }
  return text;
}
