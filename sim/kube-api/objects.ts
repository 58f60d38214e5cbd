// Builders for the objects a GPU cluster holds, as the simulated API stores them: shared by the
// service-level tests and the demo.
import type { KubeObject } from './resources.js';

export function aNamespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

export function aGpuNode(name: string, instanceType: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'node.kubernetes.io/instance-type': instanceType } } };
}

const iso = (ms: number): string => new Date(ms).toISOString();

export interface PodShape {
  gpus?: number;
  node?: string;
  labels?: Record<string, string>;
  /** The Job owning the pod. */
  job?: KubeObject;
}

/** A pending GPU pod. */
export function aGpuPod(namespace: string, name: string, shape: PodShape = {}): KubeObject {
  const owner = shape.job;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { ...(owner ? { 'job-name': owner.metadata.name } : {}), ...shape.labels },
      ...(owner ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: owner.metadata.name, uid: owner.metadata.uid, controller: true }] } : {}),
    },
    spec: {
      ...(shape.node === undefined ? {} : { nodeName: shape.node }),
      containers: [{ name: 'main', image: 'trainer', resources: { limits: { 'nvidia.com/gpu': String(shape.gpus ?? 1) } } }],
    },
    status: { phase: 'Pending' },
  };
}

export function aGpuJob(namespace: string, name: string, gpus = 1): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: { template: { spec: { containers: [{ name: 'main', image: 'trainer', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] } } },
    status: {},
  };
}

/** Pod status of a pod running since `at`. */
export function running(at: number): Record<string, unknown> {
  return { phase: 'Running', startTime: iso(at), containerStatuses: [{ name: 'main', state: { running: { startedAt: iso(at) } } }] };
}

/** Pod status of a pod that ran from `startedAt` and exited with `exitCode` at `finishedAt`. */
export function finished(startedAt: number, finishedAt: number, exitCode: number): Record<string, unknown> {
  return {
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    startTime: iso(startedAt),
    containerStatuses: [{ name: 'main', state: { terminated: { exitCode, startedAt: iso(startedAt), finishedAt: iso(finishedAt) } } }],
  };
}

/** A running dcgm-exporter pod of the GPU Operator on `node`, reachable at `podIP`. */
export function anExporterPod(node: string, podIP: string, options: { namespace?: string; labels?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `nvidia-dcgm-exporter-${node}`, namespace: options.namespace ?? 'gpu-operator', labels: options.labels ?? { app: 'nvidia-dcgm-exporter' } },
    spec: { nodeName: node, containers: [{ name: 'nvidia-dcgm-exporter', image: 'nvcr.io/nvidia/k8s/dcgm-exporter', ports: [{ name: 'metrics', containerPort: 9400 }] }] },
    status: { phase: 'Running', podIP, startTime: new Date(0).toISOString() },
  };
}
