// The objects the e2e tests create, shaped as the Job controller and a kubelet would leave them:
// GPU pods already bound to a node (no scheduler runs), Job pods owned by their Job, and the status
// fragments a kubelet would write as containers start and stop; and the capacity ConfigMaps an operator
// would write.
import type { V1ConfigMap, V1ContainerStatus, V1Job, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { KubeObject } from './admin-client.js';

export const GPU = 'nvidia.com/gpu';
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
/** The label and key the service reads capacity budgets from (its defaults). */
export const CAPACITY_LABELS: Readonly<Record<string, string>> = { 'gpucap.io/capacity': 'true' };
export const CAPACITY_KEY = 'capacity.yaml';
const CONTAINER = 'main';
const IMAGE = 'registry.example/train:1';

/** A time in whole seconds, the precision the API server keeps (it drops the milliseconds). */
export function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

function podSpec(gpus: number, nodeName?: string): NonNullable<V1Pod['spec']> {
  const resources = gpus > 0 ? { requests: { [GPU]: String(gpus) }, limits: { [GPU]: String(gpus) } } : {};
  return { nodeName, restartPolicy: 'Never', containers: [{ name: CONTAINER, image: IMAGE, resources }] };
}

/** A standalone pod bound to `node`, requesting `gpus` nvidia.com/gpu (0: none). */
export function gpuPod(name: string, options: { node: string; gpus: number; labels?: Record<string, string> }): V1Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: options.labels }, spec: podSpec(options.gpus, options.node) };
}

/** A Job whose pods each request `gpus`; the API server adds the controller-uid selector. */
export function gpuJob(name: string, options: { gpus: number; parallelism?: number; completions?: number; labels?: Record<string, string> }): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels: options.labels },
    spec: { parallelism: options.parallelism ?? 1, completions: options.completions ?? options.parallelism ?? 1, template: { spec: podSpec(options.gpus) } },
  };
}

/** A pod of `job` as its controller would create it: owned by the Job, with its labels, bound to `node`. */
export function jobPod(job: KubeObject, index: number, options: { node: string; gpus: number }): V1Pod {
  const { name, uid } = job.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${index}`,
      labels: { 'job-name': name, 'controller-uid': uid },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: podSpec(options.gpus, options.node),
  };
}

function containerStatus(state: V1ContainerStatus['state'], ready: boolean): V1ContainerStatus {
  return { name: CONTAINER, image: IMAGE, imageID: `${IMAGE}@sha256:0`, ready, restartCount: 0, state };
}

/** Kubelet's status once the container runs. */
export function runningStatus(startedAt: number): V1PodStatus {
  const at = wholeSeconds(startedAt);
  return { phase: 'Running', startTime: at, containerStatuses: [containerStatus({ running: { startedAt: at } }, true)] };
}

/** Kubelet's status once the container exited: Succeeded on exit code 0, else Failed. */
export function terminatedStatus(startedAt: number, finishedAt: number, exitCode: number): V1PodStatus {
  const started = wholeSeconds(startedAt);
  const terminated = { exitCode, startedAt: started, finishedAt: wholeSeconds(finishedAt), reason: exitCode === 0 ? 'Completed' : 'Error' };
  return { phase: exitCode === 0 ? 'Succeeded' : 'Failed', startTime: started, containerStatuses: [containerStatus({ terminated }, false)] };
}

/** A ConfigMap holding `text` under capacity.yaml, labelled as the service selects them unless `labels` says otherwise. */
export function capacityConfigMap(name: string, text: string, options: { labels?: Record<string, string> } = {}): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { ...(options.labels ?? CAPACITY_LABELS) } }, data: { [CAPACITY_KEY]: text } };
}

/** What the API server sets on an object, which a create must not carry. */
const SERVER_SET_METADATA = ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

/**
 * A fixture (an object as `kubectl get -o json` prints it) as a client would send it to create it:
 * without the metadata the server sets, and without status, which only the status subresource writes.
 */
export function forCreate<T extends { metadata?: object; status?: unknown }>(object: T): Omit<T, 'status'> {
  const { status: _status, ...created } = object;
  const metadata = Object.fromEntries(Object.entries(object.metadata ?? {}).filter(([key]) => !SERVER_SET_METADATA.includes(key)));
  return { ...created, metadata } as Omit<T, 'status'>;
}
