// The demo's shared GPUs: an H100 node partitioned by MIG (GPU feature discovery's mixed strategy)
// and an L40S node time-sliced into 4 replicas per GPU, with GFD's labels as it writes them, each with
// Jobs running on it. They show what docs/workloads.md ("How GPUs are counted") describes: a
// 1g.10gb slice counts 1/7 of a GPU, a replica 1/4. Fixed names and times, no random draw, so the
// rest of the world stays as the seed makes it.
import type { KubeObject } from '../kube-api/resources.js';
import type { KubeStore } from '../kube-api/store.js';
import { running } from '../kube-api/objects.js';

const HOUR = 3_600_000;

const MIG_NODE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'gpu-east-mig-00',
    labels: {
      'node.kubernetes.io/instance-type': 'p5.48xlarge',
      'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
      'nvidia.com/gpu.count': '8',
      'nvidia.com/gpu.memory': '81559',
      'nvidia.com/mig.strategy': 'mixed',
      'nvidia.com/mig.config': 'all-balanced',
      'nvidia.com/mig-1g.10gb.count': '16',
      'nvidia.com/mig-1g.10gb.slices.gi': '1',
      'nvidia.com/mig-1g.10gb.slices.ci': '1',
      'nvidia.com/mig-3g.40gb.count': '8',
      'nvidia.com/mig-3g.40gb.slices.gi': '3',
      'nvidia.com/mig-3g.40gb.slices.ci': '3',
    },
  },
  status: { allocatable: { 'nvidia.com/gpu': '0', 'nvidia.com/mig-1g.10gb': '16', 'nvidia.com/mig-3g.40gb': '8' } },
};

const TIME_SLICED_NODE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'gpu-east-ts-00',
    labels: {
      'node.kubernetes.io/instance-type': 'g6e.12xlarge',
      'nvidia.com/gpu.product': 'NVIDIA-L40S-SHARED',
      'nvidia.com/gpu.count': '4',
      'nvidia.com/gpu.memory': '46068',
      'nvidia.com/gpu.replicas': '4',
      'nvidia.com/gpu.sharing-strategy': 'time-slicing',
    },
  },
  status: { allocatable: { 'nvidia.com/gpu': '16' } },
};

interface SharedJob {
  namespace: string;
  name: string;
  submittedBy: string;
  node: string;
  resources: Record<string, string>;
  /**
   * Hours before now it started (it was submitted a minute before): before the other running Jobs
   * (world.ts submits them within 6 hours), so that the newest running workload is one with an exporter.
   */
  startedHoursAgo: number;
}

const JOBS: readonly SharedJob[] = [
  { namespace: 'llm-eval', name: 'eval-mig-notebook', submittedBy: 'carol', node: MIG_NODE.metadata.name, resources: { 'nvidia.com/mig-1g.10gb': '1' }, startedHoursAgo: 9 },
  { namespace: 'vision', name: 'finetune-mig-3g', submittedBy: 'erin', node: MIG_NODE.metadata.name, resources: { 'nvidia.com/mig-3g.40gb': '2' }, startedHoursAgo: 8 },
  { namespace: 'speech', name: 'asr-inference-ts', submittedBy: 'frank', node: TIME_SLICED_NODE.metadata.name, resources: { 'nvidia.com/gpu': '2' }, startedHoursAgo: 8 },
  { namespace: 'llm-train', name: 'tokenizer-ts', submittedBy: 'bob', node: TIME_SLICED_NODE.metadata.name, resources: { 'nvidia.com/gpu': '1' }, startedHoursAgo: 7 },
];

const iso = (ms: number): string => new Date(ms).toISOString();

/** Creates the shared nodes and their running Jobs (each with its pod) in `store`; returns how many Jobs run. */
export function seedSharedGpus(store: KubeStore, now: number): number {
  store.create('nodes', MIG_NODE);
  store.create('nodes', TIME_SLICED_NODE);
  for (const shared of JOBS) {
    const startedAt = now - shared.startedHoursAgo * HOUR;
    const container = { name: 'main', image: 'trainer', resources: { limits: shared.resources } };
    const job = store.create('jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: shared.name, namespace: shared.namespace, creationTimestamp: iso(startedAt - 60_000), labels: { 'gpucap.io/submitted-by': shared.submittedBy } },
      spec: { template: { spec: { containers: [container] } } },
      status: { startTime: iso(startedAt), active: 1 },
    });
    store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${shared.name}-0`,
        namespace: shared.namespace,
        creationTimestamp: iso(startedAt - 30_000),
        labels: { 'job-name': shared.name },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: shared.name, uid: job.metadata.uid, controller: true }],
      },
      spec: { nodeName: shared.node, containers: [container] },
      status: running(startedAt),
    });
  }
  return JOBS.length;
}
