// The simulated GPU cluster of the telemetry benchmark, as plain data: N nodes of 8 GPUs, each node's
// GPUs held by one 8-GPU pod. The first `bigJobNodes` pods belong to one Job (the 512-GPU training
// run); every other node runs a workload of its own (one-pod Jobs, every fourth a bare pod). Both the
// fleet child process and this process derive it from the same two numbers, so nothing but exporter
// addresses has to cross the process boundary.
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import type { SimNodeGpus } from '../../../sim/dcgm-exporter/types.js';

export const GPUS_PER_NODE = 8;
export const CLUSTER_ID = 'bench';
export const ORGANIZATION = 'acme';
const NAMESPACE = 'ml-train';
const EXPORTER_NAMESPACE = 'gpu-operator';
const INITIATIVES = ['llm', 'vision', 'speech', 'recsys'];

export interface PlannedWorkload {
  workloadId: string;
  kind: 'Job' | 'Pod';
  name: string;
  initiativeId: string;
  pods: number;
  /** Index of the workload in the plan: a seed for its utilization level. */
  ordinal: number;
}

export interface PlannedNode {
  hostname: string;
  /** Global index of the node's first GPU. */
  firstGpu: number;
  gpuUuids: string[];
  pod: { name: string; uid: string };
  workload: PlannedWorkload;
}

export interface ClusterPlan {
  nodes: PlannedNode[];
  workloads: PlannedWorkload[];
  /** The workload of the first `bigJobNodes` nodes (undefined when there are none). */
  bigJob: PlannedWorkload | undefined;
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const uuid = (kind: number, n: number): string => `${hex(kind, 8)}-0000-4000-8000-${hex(n, 12)}`;

export function planCluster(nodeCount: number, options: { bigJobNodes: number }): ClusterPlan {
  const bigJobNodes = Math.min(options.bigJobNodes, nodeCount);
  const workloads: PlannedWorkload[] = [];
  const bigJob: PlannedWorkload | undefined =
    bigJobNodes === 0 ? undefined : { workloadId: uuid(1, 0), kind: 'Job', name: `pretrain-${bigJobNodes * GPUS_PER_NODE}`, initiativeId: 'llm', pods: bigJobNodes, ordinal: 0 };
  if (bigJob !== undefined) workloads.push(bigJob);
  const nodes: PlannedNode[] = [];
  for (let i = 0; i < nodeCount; i += 1) {
    let workload: PlannedWorkload;
    if (bigJob !== undefined && i < bigJobNodes) {
      workload = bigJob;
    } else {
      const ordinal = workloads.length;
      const bare = ordinal % 4 === 3;
      workload = {
        workloadId: bare ? uuid(2, i) : uuid(1, i + 1),
        kind: bare ? 'Pod' : 'Job',
        name: bare ? `notebook-${i}` : `finetune-${i}`,
        initiativeId: INITIATIVES[ordinal % INITIATIVES.length] ?? 'llm',
        pods: 1,
        ordinal,
      };
      workloads.push(workload);
    }
    const podName = workload === bigJob ? `${workload.name}-${i}` : workload.name;
    nodes.push({
      hostname: `gpu-node-${String(i).padStart(4, '0')}`,
      firstGpu: i * GPUS_PER_NODE,
      gpuUuids: Array.from({ length: GPUS_PER_NODE }, (_, g) => `GPU-${hex(i, 8)}-${hex(g, 4)}-4${hex(g, 3)}-8000-${hex(i * GPUS_PER_NODE + g, 12)}`),
      // A bare pod's uid is its workload id.
      pod: { name: podName, uid: workload.kind === 'Pod' ? workload.workloadId : uuid(3, i) },
      workload,
    });
  }
  return { nodes, workloads, bigJob };
}

/** What the node's exporter reports: every GPU attributed to the node's pod, field values the simulator's defaults. */
export function simNodeOf(node: PlannedNode): SimNodeGpus {
  return {
    hostname: node.hostname,
    gpus: node.gpuUuids.map((uuid, index) => ({
      index,
      uuid,
      pod: { pod: node.pod.name, namespace: NAMESPACE, container: 'main' },
    })),
  };
}

/** The node's running 8-GPU pod, owned by its Job unless the workload is a bare pod. */
export function gpuPodOf(node: PlannedNode): Pod {
  const { workload } = node;
  return {
    metadata: {
      name: node.pod.name,
      namespace: NAMESPACE,
      uid: node.pod.uid,
      ...(workload.kind === 'Job' ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: workload.name, uid: workload.workloadId, controller: true }] } : {}),
    },
    spec: { nodeName: node.hostname, containers: [{ name: 'main', resources: { limits: { 'nvidia.com/gpu': String(GPUS_PER_NODE) } } }] },
    status: { phase: 'Running' },
  };
}

/** The GPU Operator's dcgm-exporter pod of the node, running at `podIP`. */
export function exporterPodOf(node: PlannedNode, podIP: string): Pod {
  return {
    metadata: { name: `nvidia-dcgm-exporter-${node.hostname}`, namespace: EXPORTER_NAMESPACE, uid: `exporter-${node.hostname}`, labels: { app: 'nvidia-dcgm-exporter' } },
    spec: { nodeName: node.hostname, containers: [{ name: 'nvidia-dcgm-exporter' }] },
    status: { phase: 'Running', podIP },
  };
}

/** The exporter's scrape target as the pod directory would make it (for ingest() without a scrape). */
export function exporterTargetOf(node: PlannedNode): { key: string; clusterId: string; namespace: string; pod: string; node: string; url: string } {
  const pod = `nvidia-dcgm-exporter-${node.hostname}`;
  return { key: `${CLUSTER_ID}/${EXPORTER_NAMESPACE}/${pod}`, clusterId: CLUSTER_ID, namespace: EXPORTER_NAMESPACE, pod, node: node.hostname, url: 'http://unused/metrics' };
}

/** Index rows for every planned workload, all running since `startedAt`, so the endpoints find them. */
export function workloadRecordsOf(plan: ClusterPlan, startedAt: number): { records: WorkloadRecord[]; intervals: PodGpuInterval[] } {
  const records = plan.workloads.map(
    (w): WorkloadRecord => ({
      workloadId: w.workloadId,
      organizationId: ORGANIZATION,
      clusterId: CLUSTER_ID,
      namespace: NAMESPACE,
      name: w.name,
      kind: w.kind,
      status: 'running',
      submittedBy: 'bench',
      initiativeId: w.initiativeId,
      instanceType: 'p5.48xlarge',
      gpuCount: w.pods * GPUS_PER_NODE,
      submittedAt: startedAt - 60_000,
      startedAt,
      completedAt: null,
      exitCode: null,
      failureReason: null,
      isManaged: true,
      resourceVersion: '1',
    }),
  );
  const intervals = plan.nodes.map((node): PodGpuInterval => ({ podUid: node.pod.uid, workloadId: node.workload.workloadId, gpus: GPUS_PER_NODE, startedAt, finishedAt: null }));
  return { records, intervals };
}
