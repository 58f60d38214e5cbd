// The dcgm-exporters of a simulated cluster in the full-scale benchmark, made inside the cluster's child
// process (kube-sim-process.ts) from the cluster it generated: one exporter pod per node, running at a
// loopback address the exporter fleet will listen on, and for each node the GPUs its exporter reports,
// each attributed to a pod the cluster really runs on that node. The service then finds the exporters
// through its pod informer, as in a cluster, and attributes the GPUs to indexed workloads.
//
// The addresses are known before the fleet starts: it hands them out in order from the same base
// (sim/dcgm-exporter/loopback-ips.ts), one per node in the order of `nodes` below, and checks that
// every exporter got the address its pod announces.
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import { LoopbackIps } from '../../../sim/dcgm-exporter/loopback-ips.js';
import { NODE_TYPES, type GeneratedCluster } from '../../data/generate-cluster.js';

export const EXPORTER_NAMESPACE = 'gpu-operator';
/** The GPU Operator's label: one of the service's default exporter selectors. */
export const EXPORTER_LABELS = { app: 'nvidia-dcgm-exporter' } as const;

export interface GpuExporterSettings {
  /** This cluster's first exporter address; the next nodes' count up from it. */
  ipBase: string;
  /** GPUs every exporter reports, whatever the node's type (issue 17's fleet: 1,250 nodes × 8). */
  gpusPerNode: number;
}

/** A GPU's pod as `[namespace, name]`, or null for a GPU no running pod holds. */
export type GpuHolder = readonly [string, string] | null;

export interface ExporterNode {
  hostname: string;
  /** The address the exporter must listen on: its pod's podIP. */
  ip: string;
  modelName: string;
  gpus: GpuHolder[];
}

export interface ClusterExporters {
  /** One exporter pod per node, for the cluster's store. */
  pods: KubeObject[];
  namespace: KubeObject;
  nodes: ExporterNode[];
}

const GPU_RESOURCE = 'nvidia.com/gpu';

interface PodShape {
  metadata: { name: string; namespace?: string };
  spec?: { nodeName?: string; containers?: { resources?: { limits?: Record<string, string> } }[] };
  status?: { phase?: string };
}

function gpusOf(pod: PodShape): number {
  return (pod.spec?.containers ?? []).reduce((sum, c) => sum + Number(c.resources?.limits?.[GPU_RESOURCE] ?? 0), 0);
}

/**
 * Fills each node's GPUs with the pods running on it, in the cluster's order, each taking as many GPUs
 * as it requests (the last one what is left). The generator schedules pods on random nodes without
 * counting GPUs, so a node runs more GPU requests than it has: the pods that do not fit get none.
 */
function gpuHoldersByNode(cluster: GeneratedCluster, gpusPerNode: number): Map<string, GpuHolder[]> {
  const holders = new Map<string, GpuHolder[]>(cluster.nodeNames.map((name) => [name, []]));
  for (const object of cluster.pods) {
    const pod = object as PodShape;
    const node = pod.spec?.nodeName;
    const gpus = node === undefined ? undefined : holders.get(node);
    if (gpus === undefined || pod.status?.phase !== 'Running' || pod.metadata.namespace === undefined) continue;
    const holder: GpuHolder = [pod.metadata.namespace, pod.metadata.name];
    for (let n = Math.min(gpusOf(pod), gpusPerNode - gpus.length); n > 0; n -= 1) gpus.push(holder);
  }
  for (const gpus of holders.values()) while (gpus.length < gpusPerNode) gpus.push(null);
  return holders;
}

export function clusterExporters(cluster: GeneratedCluster, settings: GpuExporterSettings, now: number): ClusterExporters {
  const ips = new LoopbackIps(settings.ipBase);
  const holders = gpuHoldersByNode(cluster, settings.gpusPerNode);
  const created = new Date(Math.floor(now / 1000) * 1000 - 86_400_000).toISOString().replace('.000Z', 'Z');
  const nodes: ExporterNode[] = [];
  const pods: KubeObject[] = [];
  for (const [index, node] of cluster.nodes.entries()) {
    const hostname = node.metadata.name;
    const ip = ips.next();
    const product = node.metadata.labels?.['nvidia.com/gpu.product'] ?? NODE_TYPES[0]?.product ?? 'NVIDIA-H100-80GB-HBM3';
    nodes.push({ hostname, ip, modelName: product.replace(/-/g, ' '), gpus: holders.get(hostname) ?? [] });
    pods.push({
      metadata: {
        name: `nvidia-dcgm-exporter-${index.toString(36).padStart(5, '0')}`,
        namespace: EXPORTER_NAMESPACE,
        uid: `00000000-dc9e-4000-8000-${index.toString(16).padStart(12, '0')}`,
        creationTimestamp: created,
        labels: { ...EXPORTER_LABELS, 'app.kubernetes.io/managed-by': 'gpu-operator' },
      },
      spec: { nodeName: hostname, containers: [{ name: 'nvidia-dcgm-exporter', image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.1-ubuntu22.04', ports: [{ name: 'metrics', containerPort: 9400 }] }] },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], startTime: created },
    });
  }
  const namespace: KubeObject = { metadata: { name: EXPORTER_NAMESPACE, creationTimestamp: created, labels: { 'kubernetes.io/metadata.name': EXPORTER_NAMESPACE } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
  return { pods, namespace, nodes };
}
