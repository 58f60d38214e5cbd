// Small builders of plain Kubernetes objects for the mapper tables. Each starts from a minimal valid
// object and takes only what a test row changes.
import type { WorkloadRecord } from '../../src/domain/workload.js';
import type { Container, ContainerStatus, Job, Namespace, Node, ObjectMeta, Pod, PodSpec, ResourceList } from '../../src/k8s/objects/k8s-types.js';
import { FactsProjection } from '../../src/workloads/facts/facts-projection.js';
import type { JobFacts } from '../../src/workloads/facts/job-facts.js';
import type { MappingContext } from '../../src/workloads/mapping/mapping-context.js';
import { DEFAULT_LABEL_KEYS } from '../../src/workloads/attribution/label-keys.js';
import { DEFAULT_GPU_RESOURCES } from '../../src/k8s/objects/gpu-request.js';
import type { PodFacts } from '../../src/workloads/facts/pod-facts.js';

export const T0 = '2026-11-20T10:00:00Z';
export const ms = (iso: string): number => Date.parse(iso);

/** The row a just-created, unscheduled 1-GPU object in namespace team-a maps to (defaults everywhere). */
export function aPendingRow(kind: WorkloadRecord['kind'], workloadId: string): WorkloadRecord {
  return {
    workloadId,
    organizationId: 'default-org',
    clusterId: 'local',
    namespace: 'team-a',
    name: 'w',
    kind,
    status: 'pending',
    submittedBy: 'unknown',
    initiativeId: 'team-a',
    instanceType: 'unknown',
    capacityType: null,
    gpuCount: 1,
    submittedAt: ms(T0),
    startedAt: null,
    completedAt: null,
    exitCode: null,
    failureReason: null,
    isManaged: false,
    resourceVersion: '7',
  };
}

/** A container requesting `requests` (and limiting `limits`). */
export function aContainer(options: { requests?: ResourceList; limits?: ResourceList; restartPolicy?: string } = {}): Container {
  return {
    name: 'c',
    ...(options.restartPolicy === undefined ? {} : { restartPolicy: options.restartPolicy }),
    resources: { ...(options.requests ? { requests: options.requests } : {}), ...(options.limits ? { limits: options.limits } : {}) },
  };
}

/** A container limited to `n` nvidia.com/gpu (so requesting them too). */
export const gpuContainer = (n: number | string): Container => aContainer({ limits: { 'nvidia.com/gpu': n } });

/** A terminated container status. */
export function terminated(exitCode: number, finishedAt: string): ContainerStatus {
  return { name: 'c', state: { terminated: { exitCode, finishedAt } } };
}

export function aMeta(overrides: ObjectMeta = {}): ObjectMeta {
  return { name: 'w', namespace: 'team-a', uid: 'uid-1', resourceVersion: '7', creationTimestamp: T0, ...overrides };
}

export function aPod(overrides: { metadata?: ObjectMeta; spec?: PodSpec; status?: Pod['status'] } = {}): Pod {
  return {
    metadata: aMeta(overrides.metadata),
    spec: overrides.spec ?? { containers: [gpuContainer(1)] },
    status: overrides.status ?? { phase: 'Pending' },
  };
}

/** A pod of the Job `jobUid`. */
export function aJobPod(jobUid: string, overrides: { metadata?: ObjectMeta; spec?: PodSpec; status?: Pod['status'] } = {}): Pod {
  return aPod({
    ...overrides,
    metadata: { uid: 'pod-1', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', uid: jobUid, name: 'w' }], ...overrides.metadata },
  });
}

export function aJob(overrides: { metadata?: ObjectMeta; spec?: Job['spec']; status?: Job['status']; podSpec?: PodSpec } = {}): Job {
  return {
    metadata: aMeta({ uid: 'job-1', ...overrides.metadata }),
    spec: { template: { spec: overrides.podSpec ?? { containers: [gpuContainer(1)] } }, ...overrides.spec },
    status: overrides.status ?? {},
  };
}

export function aNamespace(labels: Record<string, string> = {}, name = 'team-a'): Namespace {
  return { metadata: { name, labels } };
}

export function aNode(labels: Record<string, string> = {}): Node {
  return { metadata: { name: 'node-1', labels } };
}

export function aContext(overrides: Partial<MappingContext> = {}): MappingContext {
  return {
    clusterId: 'local',
    defaultOrganizationId: 'default-org',
    keys: DEFAULT_LABEL_KEYS,
    gpuResources: DEFAULT_GPU_RESOURCES,
    ...overrides,
  };
}

/** What the indexer keeps of a Pod (facts-projection.ts), read with the context's keys and GPU resources. */
export function podFacts(pod: Pod, context: Partial<MappingContext> = {}): PodFacts {
  return new FactsProjection({ keys: context.keys ?? DEFAULT_LABEL_KEYS, gpuResources: context.gpuResources ?? DEFAULT_GPU_RESOURCES }).pod(pod);
}

/** What the indexer keeps of a Job. */
export function jobFacts(job: Job, context: Partial<MappingContext> = {}): JobFacts {
  return new FactsProjection({ keys: context.keys ?? DEFAULT_LABEL_KEYS, gpuResources: context.gpuResources ?? DEFAULT_GPU_RESOURCES }).job(job);
}
