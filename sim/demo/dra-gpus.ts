// The demo's workloads on its Dynamic Resource Allocation node (dra-node.ts): pods that ask for GPUs
// through ResourceClaims, not through nvidia.com/gpu. A Job holding two whole H100s, a Job holding
// one 1g.10gb MIG device, and two standalone inference pods time-sharing one H100 through a claim
// both reserve. They show DRA in what docs/workloads.md ("How GPUs are counted") describes: 2 GPUs,
// 1/7 of a GPU, and half a GPU each. Fixed names and times, no random draw, as in shared-gpus.ts.
//
// Linked as a real cluster links them: a claim made from a pod's template is named
// `<pod>-<claim>-<5 chars>`, owned by the pod and listed in its status.resourceClaimStatuses; a claim
// the user made is named in the pod's spec.resourceClaims only (the API gives such pods no status
// entry). Every allocated claim lists the pods using it, by uid, in status.reservedFor.
import type { KubeObject } from '../kube-api/resources.js';
import type { KubeStore } from '../kube-api/store.js';
import { running } from '../kube-api/objects.js';
import { DRA_DEVICES, DRA_DRIVER, DRA_NODE, draDeviceClasses, draNode, draResourceSlice } from './dra-node.js';

const HOUR = 3_600_000;
/** The name of the claim in every pod's spec.resourceClaims and its container's resources.claims. */
const POD_CLAIM = 'gpu';

interface DeviceRequest {
  name: string;
  deviceClassName: string;
  count: number;
  /** A CEL selector narrowing the class (a MIG profile). */
  selector?: string;
}

interface DraJob {
  namespace: string;
  name: string;
  submittedBy: string;
  /** The ResourceClaimTemplate the pod names; the template itself is not simulated. */
  template: string;
  request: DeviceRequest;
  devices: readonly string[];
  /** The generated claim name's random part, fixed. */
  claimSuffix: string;
  /** As in shared-gpus.ts: started before any of world.ts's running Jobs (submitted within 6 hours). */
  startedHoursAgo: number;
}

const JOBS: readonly DraJob[] = [
  {
    namespace: 'llm-train',
    name: 'llm-dra-finetune',
    submittedBy: 'alice',
    template: 'two-h100',
    request: { name: 'gpus', deviceClassName: 'gpu.nvidia.com', count: 2 },
    devices: DRA_DEVICES.whole.slice(0, 2),
    claimSuffix: 'h8t2m',
    startedHoursAgo: 8,
  },
  {
    namespace: 'llm-eval',
    name: 'dra-mig-eval',
    submittedBy: 'carol',
    template: 'mig-1g10gb',
    request: { name: 'mig', deviceClassName: 'mig.nvidia.com', count: 1, selector: `device.attributes['${DRA_DRIVER}'].profile == '1g.10gb'` },
    devices: DRA_DEVICES.mig1g10gb.slice(0, 1),
    claimSuffix: 'p3x9c',
    startedHoursAgo: 7,
  },
];

/** One claim, made by the user, that two standalone pods share: the driver time-slices its GPU between them. */
const SHARED = {
  namespace: 'speech',
  claim: 'asr-shared-h100',
  pods: ['asr-dra-infer-a', 'asr-dra-infer-b'],
  submittedBy: 'frank',
  device: DRA_DEVICES.whole[2] as string,
  startedHoursAgo: 6.5,
} as const;

const TIME_SLICING = [{ requests: [POD_CLAIM], opaque: { driver: DRA_DRIVER, parameters: { apiVersion: 'resource.nvidia.com/v1beta1', kind: 'GpuConfig', sharing: { strategy: 'TimeSlicing', timeSlicingConfig: { interval: 'Long' } } } } }];

const iso = (ms: number): string => new Date(ms).toISOString();

function claimSpec(request: DeviceRequest, config?: typeof TIME_SLICING): Record<string, unknown> {
  const exactly = { deviceClassName: request.deviceClassName, allocationMode: 'ExactCount', count: request.count, ...(request.selector ? { selectors: [{ cel: { expression: request.selector } }] } : {}) };
  return { devices: { requests: [{ name: request.name, exactly }], ...(config ? { config } : {}) } };
}

/** The claim's status once the scheduler allocated `devices` of the DRA node and `pods` started using it. */
function claimStatus(request: string, devices: readonly string[], pods: readonly KubeObject[], config?: typeof TIME_SLICING): Record<string, unknown> {
  const results = devices.map((device) => ({ request, driver: DRA_DRIVER, pool: DRA_NODE, device }));
  return {
    allocation: {
      devices: { results, ...(config ? { config: config.map((c) => ({ ...c, source: 'FromClaim' })) } : {}) },
      nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [DRA_NODE] }] }] },
    },
    reservedFor: pods.map((pod) => ({ resource: 'pods', name: pod.metadata.name, uid: pod.metadata.uid })),
  };
}

/** A pod spec whose one container uses the pod's claim `source` (a template or a claim name). */
function podSpec(source: { resourceClaimTemplateName: string } | { resourceClaimName: string }): Record<string, unknown> {
  return {
    resourceClaims: [{ name: POD_CLAIM, ...source }],
    containers: [{ name: 'main', image: 'trainer', resources: { claims: [{ name: POD_CLAIM }] } }],
  };
}

function seedJob(store: KubeStore, dra: DraJob, now: number): void {
  const startedAt = now - dra.startedHoursAgo * HOUR;
  const source = { resourceClaimTemplateName: dra.template };
  const job = store.create('jobs', {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: dra.name, namespace: dra.namespace, creationTimestamp: iso(startedAt - 60_000), labels: { 'gpucap.io/submitted-by': dra.submittedBy } },
    spec: { template: { spec: podSpec(source) } },
    status: { startTime: iso(startedAt), active: 1 },
  });
  const podName = `${dra.name}-0`;
  const claimName = `${podName}-${POD_CLAIM}-${dra.claimSuffix}`;
  const pod = store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace: dra.namespace,
      creationTimestamp: iso(startedAt - 30_000),
      labels: { 'job-name': dra.name },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: dra.name, uid: job.metadata.uid, controller: true }],
    },
    spec: { nodeName: DRA_NODE, ...podSpec(source) },
    status: { ...running(startedAt), resourceClaimStatuses: [{ name: POD_CLAIM, resourceClaimName: claimName }] },
  });
  // Made by the resource claim controller once the pod exists, so it can name the pod as its owner.
  store.create('resourceclaims', {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: {
      name: claimName,
      namespace: dra.namespace,
      generateName: `${podName}-${POD_CLAIM}-`,
      creationTimestamp: iso(startedAt - 29_000),
      finalizers: ['resource.kubernetes.io/delete-protection'],
      annotations: { 'resource.kubernetes.io/pod-claim-name': POD_CLAIM },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: claimSpec(dra.request),
    status: claimStatus(dra.request.name, dra.devices, [pod]),
  });
}

function seedSharedClaim(store: KubeStore, now: number): void {
  const startedAt = now - SHARED.startedHoursAgo * HOUR;
  const pods = SHARED.pods.map((name) =>
    store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: SHARED.namespace, creationTimestamp: iso(startedAt - 30_000), labels: { app: 'asr-dra-infer', 'gpucap.io/submitted-by': SHARED.submittedBy } },
      spec: { nodeName: DRA_NODE, ...podSpec({ resourceClaimName: SHARED.claim }) },
      status: running(startedAt),
    }),
  );
  const request = { name: POD_CLAIM, deviceClassName: 'gpu.nvidia.com', count: 1 };
  store.create('resourceclaims', {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name: SHARED.claim, namespace: SHARED.namespace, creationTimestamp: iso(startedAt - 120_000), finalizers: ['resource.kubernetes.io/delete-protection'] },
    spec: claimSpec(request, TIME_SLICING),
    status: claimStatus(request.name, [SHARED.device], pods, TIME_SLICING),
  });
}

/** Creates the DRA node, its device classes and slice, and its workloads in `store`; returns how many Jobs run. */
export function seedDraGpus(store: KubeStore, now: number): number {
  // Up, with the driver installed and publishing, long before any of its workloads.
  const joinedAt = now - 40 * 24 * HOUR;
  const node = store.create('nodes', draNode(iso(joinedAt)));
  for (const deviceClass of draDeviceClasses(iso(joinedAt + 60_000))) store.create('deviceclasses', deviceClass);
  store.create('resourceslices', draResourceSlice(node, iso(joinedAt + 120_000)));
  for (const job of JOBS) seedJob(store, job, now);
  seedSharedClaim(store, now);
  return JOBS.length;
}
