// Deterministic Kubernetes objects for the sync-ingest benchmark: Namespaces (with organization and
// initiative labels), GPU Nodes of two instance types, Jobs with 1-4 GPU pods each and standalone GPU
// pods, in the shapes the workload mappers read (src/workloads: phases, startTime, containerStatuses,
// Job conditions, ownerReferences). The same shape and seed always give the same objects; only the
// times move with `now`, so a run's objects are recent whatever the date. Also the pod lifecycle that
// drives the event stream (PodChurn): create → schedule and start → finish → garbage-collect.
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { mulberry32 } from '../../sim/random.js';
import { benchPopulation, weightedPicker, type Organization } from './generate-workloads.js';

export const CLUSTER_SEED = 0x5ca1e;

export interface ClusterShape {
  /** Every pod: the Jobs' pods plus standalone ones. */
  pods: number;
  jobs: number;
  namespaces: number;
  nodes: number;
}

export const FULL_CLUSTER: ClusterShape = { pods: 100_000, jobs: 10_000, namespaces: 50, nodes: 1_250 };
export const QUICK_CLUSTER: ClusterShape = { pods: 5_000, jobs: 500, namespaces: 10, nodes: 64 };

/**
 * Issue 7's reference scale, as the service meets it: 150,000 live pods (15,000 of them Jobs' parents'
 * children) and 1,250 GPU nodes spread over 4 clusters, one home cluster and three remote ones.
 */
export const REFERENCE_FLEET = { clusters: 4, total: { pods: 150_000, jobs: 15_000, namespaces: 52, nodes: 1_250 } } as const;
export const QUICK_FLEET = { clusters: 2, total: { pods: 5_000, jobs: 500, namespaces: 10, nodes: 64 } } as const;

/** The shape of cluster `index` of `clusters` sharing `total` (remainders go to the first clusters). */
export function shareOf(total: ClusterShape, clusters: number, index: number): ClusterShape {
  const part = (n: number) => Math.floor(n / clusters) + (index < n % clusters ? 1 : 0);
  return { pods: part(total.pods), jobs: part(total.jobs), namespaces: part(total.namespaces), nodes: part(total.nodes) };
}

/** Two node types, as a cluster with one H100 pool and one L40S pool would have. */
export const NODE_TYPES: readonly { instanceType: string; product: string; gpus: number; share: number }[] = [
  { instanceType: 'p5.48xlarge', product: 'NVIDIA-H100-80GB-HBM3', gpus: 8, share: 0.6 },
  { instanceType: 'g6e.12xlarge', product: 'NVIDIA-L40S', gpus: 4, share: 0.4 },
];

type Phase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** Shares of standalone pods by phase; Jobs by state. */
const POD_PHASES: readonly [Phase, number][] = [['Succeeded', 0.55], ['Failed', 0.08], ['Running', 0.3], ['Pending', 0.07]];
type JobState = 'completed' | 'failed' | 'running' | 'suspended';
const JOB_STATES: readonly [JobState, number][] = [['completed', 0.6], ['failed', 0.08], ['running', 0.27], ['suspended', 0.05]];
const GPU_REQUESTS: readonly [number, number][] = [[1, 0.4], [2, 0.2], [4, 0.2], [8, 0.2]];
const FAILED_EXIT_CODES = [1, 1, 2, 137, 139];
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export interface NamespaceInfo {
  name: string;
  organizationId: string;
  initiativeId: string;
  users: string[];
}

export interface GeneratedCluster {
  namespaces: KubeObject[];
  nodes: KubeObject[];
  jobs: KubeObject[];
  pods: KubeObject[];
  /** What the index should hold once synced: one row per GPU Job and per standalone GPU pod. */
  expectedWorkloads: number;
  counts: { jobPods: number; standalonePods: number; podsByPhase: Record<string, number>; jobsByState: Record<string, number> };
  namespaceInfo: NamespaceInfo[];
  nodeNames: string[];
}

/** A deterministic RFC 4122-looking uid from the generator's stream. */
export function uidFrom(random: () => number): string {
  const hex = () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0');
  const h = hex() + hex() + hex() + hex();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function suffix(random: () => number, length = 5): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(random() * alphabet.length)] ?? 'x';
  return out;
}

const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** Builds pods and their status transitions with one PRNG and one notion of "now". */
export class PodFactory {
  constructor(
    private readonly random: () => number,
    private readonly nodeNames: readonly string[],
  ) {}

  /** A GPU pod as the API server holds it after admission, in phase Pending and not yet scheduled. */
  pending(meta: { namespace: string; name: string; uid: string; createdAt: number; labels: Record<string, string>; ownerReferences?: unknown[] }, gpus: number, restartPolicy: 'Never' | 'OnFailure'): KubeObject {
    const token = suffix(this.random);
    return {
      metadata: {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        creationTimestamp: iso(meta.createdAt),
        labels: meta.labels,
        ...(meta.ownerReferences === undefined ? {} : { ownerReferences: meta.ownerReferences }),
      },
      spec: {
        containers: [
          {
            name: 'trainer',
            image: 'registry.example.com/ml/trainer:1.14.2',
            command: ['python', '-m', 'trainer.main'],
            args: ['--config=/etc/trainer/config.yaml', `--gpus=${gpus}`],
            env: [
              { name: 'NCCL_DEBUG', value: 'WARN' },
              { name: 'OMP_NUM_THREADS', value: '8' },
              { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            ],
            resources: {
              limits: { memory: `${gpus * 60}Gi`, 'nvidia.com/gpu': String(gpus) },
              requests: { cpu: String(gpus * 8), memory: `${gpus * 60}Gi`, 'nvidia.com/gpu': String(gpus) },
            },
            volumeMounts: [
              { name: 'config', mountPath: '/etc/trainer' },
              { name: 'dshm', mountPath: '/dev/shm' },
              { name: `kube-api-access-${token}`, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
            ],
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'IfNotPresent',
          },
        ],
        restartPolicy,
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        serviceAccountName: 'default',
        serviceAccount: 'default',
        securityContext: {},
        schedulerName: 'default-scheduler',
        tolerations: [
          { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        ],
        volumes: [
          { name: 'config', configMap: { name: 'trainer-config', defaultMode: 420 } },
          { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '16Gi' } },
          { name: `kube-api-access-${token}`, projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }] } },
        ],
        priority: 0,
        enableServiceLinks: true,
        preemptionPolicy: 'PreemptLowerPriority',
      },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: iso(meta.createdAt), reason: 'Unschedulable', message: '0/1250 nodes are available: insufficient nvidia.com/gpu.' }],
        qosClass: 'Burstable',
      },
    };
  }

  /** The pod bound to a node and its container started at `startedAt`. */
  running(pod: KubeObject, startedAt: number): KubeObject {
    const node = this.nodeNames[Math.floor(this.random() * this.nodeNames.length)] ?? 'node-0';
    const hostIp = `10.${Math.floor(this.random() * 200)}.${Math.floor(this.random() * 250)}.${1 + Math.floor(this.random() * 250)}`;
    const podIp = `10.244.${Math.floor(this.random() * 250)}.${1 + Math.floor(this.random() * 250)}`;
    const scheduledAt = iso(startedAt - 2_000);
    const started = iso(startedAt);
    const spec = pod.spec as Record<string, unknown>;
    return {
      ...pod,
      spec: { ...spec, nodeName: node },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: started },
          { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: scheduledAt },
          { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: started },
          { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: started },
          { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: scheduledAt },
        ],
        hostIP: hostIp,
        hostIPs: [{ ip: hostIp }],
        podIP: podIp,
        podIPs: [{ ip: podIp }],
        startTime: scheduledAt,
        containerStatuses: [
          {
            name: 'trainer',
            state: { running: { startedAt: started } },
            lastState: {},
            ready: true,
            restartCount: 0,
            image: 'registry.example.com/ml/trainer:1.14.2',
            imageID: 'registry.example.com/ml/trainer@sha256:3f1c9a7e2b5d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6',
            containerID: `containerd://${uidFrom(this.random).replace(/-/g, '')}${uidFrom(this.random).replace(/-/g, '')}`,
            started: true,
          },
        ],
        qosClass: 'Burstable',
      },
    };
  }

  /** A running pod whose container exited at `finishedAt` (0: Succeeded, else Failed). */
  finished(pod: KubeObject, finishedAt: number, exitCode: number): KubeObject {
    const status = pod.status as Record<string, unknown> & { containerStatuses: Record<string, unknown>[]; conditions: Record<string, unknown>[] };
    const container = status.containerStatuses[0] ?? {};
    const startedAt = (container.state as { running?: { startedAt: string } } | undefined)?.running?.startedAt;
    const done = iso(finishedAt);
    return {
      ...pod,
      status: {
        ...status,
        phase: exitCode === 0 ? 'Succeeded' : 'Failed',
        conditions: status.conditions.map((c) => (c.type === 'Ready' || c.type === 'ContainersReady' || c.type === 'PodReadyToStartContainers' ? { ...c, status: 'False', lastTransitionTime: done, ...(c.type === 'PodReadyToStartContainers' ? {} : { reason: 'PodCompleted' }) } : c)),
        containerStatuses: [
          {
            ...container,
            state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: done, containerID: container.containerID } },
            ready: false,
            started: false,
          },
        ],
      },
    };
  }
}

/** Every object of the cluster, fully built (about 3 KB of JSON per pod). */
export function generateCluster(shape: ClusterShape, options: { now: number; /** Distinguishes the clusters of one run (their uids must differ). */ seed?: number }): GeneratedCluster {
  const random = mulberry32(CLUSTER_SEED ^ shape.pods ^ (shape.jobs << 8) ^ Math.imul(options.seed ?? 0, 0x9e3779b1));
  const now = options.now;
  const namespaceInfo = namespacesFor(shape.namespaces, benchPopulation(), random);
  const namespaces: KubeObject[] = namespaceInfo.map((ns) => ({
    metadata: {
      name: ns.name,
      uid: uidFrom(random),
      creationTimestamp: iso(now - 300 * DAY_MS),
      labels: { 'kubernetes.io/metadata.name': ns.name, 'gpucap.io/organization': ns.organizationId, 'gpucap.io/initiative': ns.initiativeId },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }));

  const pickNodeType = weightedPicker(NODE_TYPES.map((t) => [t, t.share] as const));
  const nodes: KubeObject[] = [];
  for (let i = 0; i < shape.nodes; i += 1) {
    const type = pickNodeType(random());
    const name = `gpu-node-${String(i).padStart(4, '0')}`;
    const zone = ['us-east-1a', 'us-east-1b', 'us-east-1c'][i % 3] ?? 'us-east-1a';
    nodes.push({
      metadata: {
        name,
        uid: uidFrom(random),
        creationTimestamp: iso(now - 90 * DAY_MS),
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node.kubernetes.io/instance-type': type.instanceType,
          'topology.kubernetes.io/zone': zone,
          'nvidia.com/gpu.product': type.product,
          'nvidia.com/gpu.count': String(type.gpus),
        },
      },
      spec: { providerID: `aws:///${zone}/i-${suffix(random, 17)}`, taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }] },
      status: {
        capacity: { cpu: '192', memory: '2097152000Ki', 'nvidia.com/gpu': String(type.gpus), pods: '110' },
        allocatable: { cpu: '191450m', memory: '2086000000Ki', 'nvidia.com/gpu': String(type.gpus), pods: '110' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: iso(now), lastTransitionTime: iso(now - 90 * DAY_MS) }],
        nodeInfo: { kubeletVersion: 'v1.33.2', containerRuntimeVersion: 'containerd://1.7.27', osImage: 'Amazon Linux 2023', architecture: 'amd64', operatingSystem: 'linux' },
      },
    });
  }
  const nodeNames = nodes.map((n) => n.metadata.name);
  const factory = new PodFactory(random, nodeNames);
  const pickGpus = weightedPicker(GPU_REQUESTS);
  const pickPhase = weightedPicker(POD_PHASES);
  const pickJobState = weightedPicker(JOB_STATES);
  const podsByPhase: Record<string, number> = {};
  const jobsByState: Record<string, number> = {};
  const pods: KubeObject[] = [];
  const jobs: KubeObject[] = [];

  // A pod created `ageMs` ago in `phase`: started a few minutes after creation, finished later.
  const podIn = (phase: Phase, meta: Parameters<PodFactory['pending']>[0], gpus: number, restartPolicy: 'Never' | 'OnFailure', ageMs: number): KubeObject => {
    podsByPhase[phase] = (podsByPhase[phase] ?? 0) + 1;
    const pending = factory.pending(meta, gpus, restartPolicy);
    if (phase === 'Pending') return pending;
    const startedAt = meta.createdAt + Math.min(ageMs / 2, (0.5 + 5 * random()) * MINUTE_MS);
    const running = factory.running(pending, startedAt);
    if (phase === 'Running') return running;
    const finishedAt = startedAt + (now - startedAt) * (0.2 + 0.7 * random());
    return factory.finished(running, finishedAt, phase === 'Succeeded' ? 0 : (FAILED_EXIT_CODES[Math.floor(random() * FAILED_EXIT_CODES.length)] ?? 1));
  };

  let jobPods = 0;
  for (let j = 0; j < shape.jobs; j += 1) {
    const ns = namespaceInfo[Math.floor(random() * namespaceInfo.length)] as NamespaceInfo;
    const state = pickJobState(random());
    jobsByState[state] = (jobsByState[state] ?? 0) + 1;
    const podCount = 1 + Math.floor(random() * 4);
    const gpus = pickGpus(random());
    const user = ns.users[Math.floor(random() * ns.users.length)] ?? 'unknown';
    const name = `train-${j.toString(36).padStart(4, '0')}-${suffix(random)}`;
    const uid = uidFrom(random);
    const ageMs = (state === 'running' ? 2 * DAY_MS : 14 * DAY_MS) * random() + 10 * MINUTE_MS;
    const createdAt = now - ageMs;
    const managed = random() < 0.6;
    const labels: Record<string, string> = { 'gpucap.io/submitted-by': user, ...(managed ? { 'kueue.x-k8s.io/queue-name': `${ns.initiativeId}-queue` } : {}) };
    const podLabels = (index: number): Record<string, string> => ({
      ...labels,
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': name,
      'controller-uid': uid,
      'job-name': name,
      'batch.kubernetes.io/job-completion-index': String(index),
    });
    const owner = [{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }];
    const thePods: KubeObject[] = [];
    if (state !== 'suspended') {
      for (let p = 0; p < podCount; p += 1) {
        // A failed Job's last pod failed; a finished Job's others succeeded.
        const phase: Phase = state === 'running' ? (random() < 0.1 ? 'Pending' : 'Running') : state === 'failed' && p === podCount - 1 ? 'Failed' : 'Succeeded';
        const meta = { namespace: ns.name, name: `${name}-${p}-${suffix(random)}`, uid: uidFrom(random), createdAt: createdAt + 1000, labels: podLabels(p), ownerReferences: owner };
        thePods.push(podIn(phase, meta, gpus, 'Never', ageMs));
      }
    }
    jobPods += thePods.length;
    pods.push(...thePods);
    jobs.push(jobObject({ name, namespace: ns.name, uid, labels, createdAt, podCount, gpus, state }, thePods, factory));
  }

  const standalone = Math.max(0, shape.pods - jobPods);
  for (let i = 0; i < standalone; i += 1) {
    const ns = namespaceInfo[Math.floor(random() * namespaceInfo.length)] as NamespaceInfo;
    const phase = pickPhase(random());
    const user = ns.users[Math.floor(random() * ns.users.length)] ?? 'unknown';
    const ageMs = (phase === 'Running' || phase === 'Pending' ? 2 * DAY_MS : 14 * DAY_MS) * random() + MINUTE_MS;
    const labels: Record<string, string> = { app: 'notebook', 'gpucap.io/submitted-by': user, ...(random() < 0.1 ? { 'gpucap.io/initiative': `${ns.initiativeId}-adhoc` } : {}) };
    const meta = { namespace: ns.name, name: `pod-${i.toString(36).padStart(4, '0')}-${suffix(random)}`, uid: uidFrom(random), createdAt: now - ageMs, labels };
    pods.push(podIn(phase, meta, pickGpus(random()), 'OnFailure', ageMs));
  }
  return {
    namespaces,
    nodes,
    jobs,
    pods,
    expectedWorkloads: jobs.length + standalone,
    counts: { jobPods, standalonePods: standalone, podsByPhase, jobsByState },
    namespaceInfo,
    nodeNames,
  };
}

/** ~n namespaces spread over the population's organizations (by share), each holding one initiative. */
function namespacesFor(count: number, population: Organization[], random: () => number): NamespaceInfo[] {
  const pickOrg = weightedPicker(population.map((o) => [o, o.share] as const));
  const out: NamespaceInfo[] = [];
  for (let i = 0; i < count; i += 1) {
    const org = pickOrg(random());
    const initiative = org.initiatives[i % org.initiatives.length] ?? org.initiatives[0];
    out.push({ name: `${initiative?.id ?? 'team'}-${String(i).padStart(2, '0')}`, organizationId: org.id, initiativeId: initiative?.id ?? 'team', users: initiative?.users ?? [] });
  }
  return out;
}

function jobObject(
  job: { name: string; namespace: string; uid: string; labels: Record<string, string>; createdAt: number; podCount: number; gpus: number; state: JobState },
  pods: readonly KubeObject[],
  factory: PodFactory,
): KubeObject {
  const template = factory.pending({ namespace: job.namespace, name: job.name, uid: '', createdAt: job.createdAt, labels: {} }, job.gpus, 'Never');
  const { containers, restartPolicy, terminationGracePeriodSeconds, tolerations, volumes } = template.spec as Record<string, unknown>;
  const startTime = (pods[0]?.status as { startTime?: string } | undefined)?.startTime ?? iso(job.createdAt + 2_000);
  const finishedAt = pods
    .map((p) => ((p.status as { containerStatuses?: { state?: { terminated?: { finishedAt?: string } } }[] }).containerStatuses?.[0]?.state?.terminated?.finishedAt ?? ''))
    .sort()
    .at(-1);
  const status: Record<string, unknown> = {};
  if (job.state === 'running') Object.assign(status, { startTime, active: pods.length, ready: pods.filter((p) => (p.status as { phase: string }).phase === 'Running').length, terminating: 0, uncountedTerminatedPods: {} });
  if (job.state === 'completed' || job.state === 'failed') {
    const at = finishedAt ?? startTime;
    const type = job.state === 'completed' ? 'Complete' : 'Failed';
    const criteria = job.state === 'completed' ? 'SuccessCriteriaMet' : 'FailureTarget';
    Object.assign(status, {
      startTime,
      completionTime: job.state === 'completed' ? at : undefined,
      succeeded: pods.filter((p) => (p.status as { phase: string }).phase === 'Succeeded').length,
      failed: pods.filter((p) => (p.status as { phase: string }).phase === 'Failed').length,
      terminating: 0,
      uncountedTerminatedPods: {},
      conditions: [
        { type: criteria, status: 'True', lastProbeTime: at, lastTransitionTime: at, reason: job.state === 'completed' ? 'CompletionsReached' : 'BackoffLimitExceeded' },
        { type, status: 'True', lastProbeTime: at, lastTransitionTime: at, reason: job.state === 'completed' ? 'CompletionsReached' : 'BackoffLimitExceeded' },
      ],
    });
  }
  return {
    metadata: { name: job.name, namespace: job.namespace, uid: job.uid, creationTimestamp: iso(job.createdAt), labels: job.labels, generation: 1 },
    spec: {
      parallelism: job.podCount,
      completions: job.podCount,
      completionMode: 'Indexed',
      backoffLimit: 0,
      suspend: job.state === 'suspended',
      manualSelector: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': job.uid } },
      template: {
        metadata: { labels: { ...job.labels, 'batch.kubernetes.io/controller-uid': job.uid, 'batch.kubernetes.io/job-name': job.name, 'controller-uid': job.uid, 'job-name': job.name } },
        spec: { containers, restartPolicy, terminationGracePeriodSeconds, tolerations, volumes },
      },
    },
    status: JSON.parse(JSON.stringify(status)) as Record<string, unknown>,
  };
}
