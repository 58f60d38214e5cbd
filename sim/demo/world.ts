// The demo's simulated world: two GPU clusters (H100 nodes in gpu-east, L40S nodes in gpu-west), each
// node with a simulated dcgm-exporter, and in gpu-east a MIG node and a time-sliced one with Jobs on
// them (shared-gpus.ts) and a node whose GPUs are handed out by Dynamic Resource Allocation, with its
// claims and pods (dra-gpus.ts); in gpu-west two L4 nodes of a pool budgeted above its hardware
// (l4-pool.ts); a cordoned node, a NotReady one and one with a failed GPU (node-faults.ts); spot and
// on-demand nodes and acme's prices for them (prices.ts); three organizations' namespaces, a month of
// finished Jobs, Jobs running on real GPU slots, and a churn that starts, finishes and fails Jobs while
// the demo runs.
// Deterministic for a given seed, so every run looks alike. Every Job and Pod keeps the order a real
// cluster gives them: created, then started, then finished (test/demo/world.test.ts).
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimDcgmFleet } from '../dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../dcgm-exporter/exporter.js';
import { FAILURE_SHAPES, failedPodStatus, failureShapeOf, jobFailedCondition, nameHash } from '../kube-api/failures.js';
import { aGpuJob, aGpuNode, aGpuPod, aNamespace, anExporterPod, finished, running } from '../kube-api/objects.js';
import type { KubeObject } from '../kube-api/resources.js';
import { startKubeApi, type KubeApi } from '../kube-api/server.js';
import { mulberry32 } from '../random.js';
import { seedDraGpus } from './dra-gpus.js';
import { L4_CLUSTER, L4_POOL_LINE, seedL4Nodes } from './l4-pool.js';
import { reportNodeStates, schedulableGpu } from './node-faults.js';
import { capacityTypeLabels, demoPricesConfigMap } from './prices.js';
import { seedSharedGpus } from './shared-gpus.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const EXPORTERS_UP_FOR = 40 * DAY;
/** Longest wait of a Job in the queue before it starts, in the seeded history and running Jobs. */
const MAX_QUEUE_WAIT = 20 * 60_000;

export const CAPACITY_NAMESPACE = 'gpu-capacity-api';

interface ClusterPlan {
  name: string;
  instanceType: string;
  model: string;
  nodes: number;
  gpusPerNode: number;
}

const CLUSTERS: readonly ClusterPlan[] = [
  { name: 'gpu-east', instanceType: 'p5.48xlarge', model: 'NVIDIA H100 80GB HBM3', nodes: 10, gpusPerNode: 8 },
  { name: 'gpu-west', instanceType: 'g6e.12xlarge', model: 'NVIDIA L40S', nodes: 12, gpusPerNode: 4 },
];

/** Namespaces by organization; the initiative comes from the namespace label, except `speech` (mapped by the budget). */
const NAMESPACES: readonly { name: string; organization: string; initiative?: string; people: string[] }[] = [
  { name: 'llm-train', organization: 'acme', initiative: 'llm', people: ['alice', 'bob'] },
  { name: 'llm-eval', organization: 'acme', initiative: 'llm', people: ['carol'] },
  { name: 'vision', organization: 'acme', initiative: 'vision', people: ['dave', 'erin'] },
  { name: 'speech', organization: 'acme', people: ['frank'] },
  { name: 'research', organization: 'globex', initiative: 'research', people: ['grace', 'heidi'] },
  { name: 'platform', organization: 'globex', initiative: 'platform', people: ['ivan'] },
  { name: 'cv-lab', organization: 'initech', initiative: 'cv', people: ['judy', 'mallory'] },
];

/** Budgets of two organizations (initech has none: it shows what "no budget" answers). */
const BUDGETS: Record<string, string> = {
  acme: [
    'organization_id: acme',
    'period: month',
    'allocated_gpu_hours: 40000',
    'pools:',
    // The pools add up to the organization's allocation: more would be logged as a warning at start.
    // Its nodes are on-demand and spot (prices.ts): the pool is named for the GPU alone.
    '  - { pool_id: h100, name: H100, allocated_gpu_hours: 26000, instance_types: [p5.48xlarge] }',
    '  - { pool_id: l40s, name: L40S, allocated_gpu_hours: 12000, instance_types: [g6e.12xlarge] }',
    L4_POOL_LINE,
    'initiatives:',
    '  - { initiative_id: llm, name: LLM Research, allocated_gpu_hours: 25000 }',
    '  - { initiative_id: vision, name: Computer Vision, allocated_gpu_hours: 10000 }',
    '  - { initiative_id: speech, name: Speech, allocated_gpu_hours: 5000, namespaces: [speech] }',
    '',
  ].join('\n'),
  globex: [
    'organization_id: globex',
    'period: quarter',
    'allocated_gpu_hours: 30000',
    'initiatives:',
    '  - { initiative_id: research, name: Research, allocated_gpu_hours: 20000 }',
    '  - { initiative_id: platform, name: Platform, allocated_gpu_hours: 10000 }',
    '',
  ].join('\n'),
};

interface Slot {
  node: string;
  exporter: SimExporterHandle;
  uuid: string;
  busy: boolean;
  /** False on a GPU out of service (node-faults.ts): no Job starts there. */
  schedulable: boolean;
}

interface LiveJob {
  job: KubeObject;
  pod: KubeObject;
  slots: Slot[];
  startedAt: number;
}

export interface DemoCluster {
  name: string;
  api: KubeApi;
  kubeconfigPath: string;
}

export interface DemoWorld {
  home: DemoCluster;
  /** Every cluster, the home one first. */
  clusters: readonly DemoCluster[];
  remoteDir: string;
  exporterPort: number;
  /** Finished, running and pending Jobs at the start. */
  jobs: { finished: number; running: number; pending: number };
  /** One churn step at `now` (never before the previous step's): a Job finishes (or fails), a pending one starts, a new one is submitted. */
  step(now: number): void;
  close(): Promise<void>;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

export async function startDemoWorld(options: { dir: string; now: number; seed?: number }): Promise<DemoWorld> {
  const random = mulberry32(options.seed ?? 42);
  const fleet = await SimDcgmFleet.start();
  const clusters: DemoCluster[] = [];
  const slotsByCluster = new Map<string, Slot[]>();
  const live = new Map<string, LiveJob[]>();
  const pending = new Map<string, KubeObject[]>();
  let counter = 0;
  const counts = { finished: 0, running: 0, pending: 0 };

  const jobObject = (namespace: (typeof NAMESPACES)[number], gpus: number, createdAt: number): KubeObject => {
    counter += 1;
    const base = aGpuJob(namespace.name, `${pick(random, ['pretrain', 'finetune', 'eval', 'sweep', 'distill'])}-${counter.toString().padStart(4, '0')}`, gpus);
    const who = pick(random, namespace.people);
    return { ...base, metadata: { ...base.metadata, creationTimestamp: new Date(createdAt).toISOString(), labels: { 'gpucap.io/submitted-by': who, ...(random() < 0.5 ? { 'kueue.x-k8s.io/queue-name': 'default' } : {}) } } };
  };

  for (const plan of CLUSTERS) {
    // Both clusters are recent enough to serve resource.k8s.io/v1; only gpu-east has a DRA node.
    const api = await startKubeApi({ clusterName: plan.name, token: `${plan.name}-demo-token`, dra: true });
    const kubeconfigPath = join(options.dir, `${plan.name}.kubeconfig`);
    writeFileSync(kubeconfigPath, api.kubeconfig());
    clusters.push({ name: plan.name, api, kubeconfigPath });
    const store = api.store;
    // Every cluster has one: its uid is the cluster's identity, which the writer lock checks (src/ha/).
    store.create('namespaces', aNamespace('kube-system'));
    store.create('namespaces', aNamespace('gpu-operator'));
    if (clusters.length === 1) {
      store.create('namespaces', aNamespace(CAPACITY_NAMESPACE));
      for (const [organization, text] of Object.entries(BUDGETS)) {
        store.create('configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `capacity-${organization}`, namespace: CAPACITY_NAMESPACE, labels: { 'gpucap.io/capacity': 'true' } },
          data: { 'capacity.yaml': text },
        });
      }
      // The prices live beside the budgets, in the home cluster's namespace: they price both clusters' GPUs.
      store.create('configmaps', demoPricesConfigMap(CAPACITY_NAMESPACE, options.now));
    }
    for (const ns of NAMESPACES) {
      store.create('namespaces', aNamespace(ns.name, { 'gpucap.io/organization': ns.organization, ...(ns.initiative ? { 'gpucap.io/initiative': ns.initiative } : {}) }));
    }
    const slots: Slot[] = [];
    for (let n = 0; n < plan.nodes; n += 1) {
      const node = `${plan.name}-node-${n.toString().padStart(2, '0')}`;
      // GPU feature discovery's product label, as the GPU Operator writes it: the workloads' gpu_model.
      // And Karpenter's capacity type, which picks the node's GPUs' rate (prices.ts).
      const gpuNode = aGpuNode(node, plan.instanceType);
      gpuNode.metadata.labels = {
        ...gpuNode.metadata.labels,
        'nvidia.com/gpu.product': plan.model.replaceAll(' ', '-'),
        'nvidia.com/gpu.count': String(plan.gpusPerNode),
        ...capacityTypeLabels(node),
      };
      store.create('nodes', gpuNode);
      const gpus = Array.from({ length: plan.gpusPerNode }, (_, index) => ({ index, uuid: `GPU-${plan.name}-${n}-${index}`, modelName: plan.model }));
      const exporter = await fleet.add({ hostname: node, gpus });
      // Up before the month of history, as the GPU Operator's exporters are before any Job runs.
      const exporterPod = anExporterPod(node, exporter.ip);
      exporterPod.metadata.creationTimestamp = new Date(options.now - EXPORTERS_UP_FOR).toISOString();
      exporterPod.status = { ...(exporterPod.status as Record<string, unknown>), startTime: new Date(options.now - EXPORTERS_UP_FOR + 60_000).toISOString() };
      store.create('pods', exporterPod);
      for (const gpu of gpus) slots.push({ node, exporter, uuid: gpu.uuid, busy: false, schedulable: schedulableGpu(node, gpu.index) });
    }
    if (plan.name === L4_CLUSTER) seedL4Nodes(store);
    slotsByCluster.set(plan.name, slots);
    live.set(plan.name, []);
    pending.set(plan.name, []);

    // A month of history: Jobs that ran and completed (or failed) on the cluster's nodes.
    const historyJobs: KubeObject[] = [];
    const historyPods: KubeObject[] = [];
    for (let i = 0; i < 110; i += 1) {
      const ns = pick(random, NAMESPACES);
      const gpus = pick(random, [1, 2, 4, plan.gpusPerNode]);
      const created = options.now - Math.floor(random() * 30 * DAY) - 2 * HOUR;
      const started = created + Math.floor(random() * MAX_QUEUE_WAIT);
      const ended = Math.min(started + Math.floor((0.2 + random() * 10) * HOUR), options.now - 60_000);
      const failed = random() < 0.15;
      const job = jobObject(ns, gpus, created);
      // The store gives a uid only when the Job is seeded, after its pod is built: without one now,
      // the pod's ownerReference has none, and the service takes the pod for a workload of its own.
      job.metadata.uid = randomUUID();
      const pod = aGpuPod(ns.name, `${job.metadata.name}-0`, { gpus, node: pick(random, slots).node, job });
      pod.metadata.creationTimestamp = new Date(created).toISOString();
      // Failed Jobs fail the ways real ones do (sim/kube-api/failures.ts), so the demo shows each reason.
      const shape = failed ? pick(random, FAILURE_SHAPES) : undefined;
      pod.status = shape === undefined ? finished(started, ended, 0) : failedPodStatus(shape, started, ended);
      job.status = {
        startTime: new Date(started).toISOString(),
        completionTime: failed ? undefined : new Date(ended).toISOString(),
        conditions: [
          shape === undefined
            ? { type: 'Complete', status: 'True', lastTransitionTime: new Date(ended).toISOString() }
            : jobFailedCondition(shape, ended, `${ns.name}/${pod.metadata.name}`),
        ],
        ...(failed ? { failed: 1 } : { succeeded: 1 }),
      };
      historyJobs.push(job);
      historyPods.push(pod);
    }
    store.seed('jobs', historyJobs);
    store.seed('pods', historyPods);
    counts.finished += historyJobs.length;
  }

  const free = (cluster: string, gpus: number): Slot[] | null => {
    const slots = slotsByCluster.get(cluster) ?? [];
    // A Job's pod holds GPUs of one node, as the scheduler places it.
    const byNode = new Map<string, Slot[]>();
    for (const slot of slots) if (!slot.busy && slot.schedulable) byNode.set(slot.node, [...(byNode.get(slot.node) ?? []), slot]);
    for (const nodeSlots of byNode.values()) if (nodeSlots.length >= gpus) return nodeSlots.slice(0, gpus);
    return null;
  };

  const start = (cluster: DemoCluster, job: KubeObject, at: number): boolean => {
    const gpus = Number((job.spec as { template: { spec: { containers: { resources: { limits: Record<string, string> } }[] } } }).template.spec.containers[0]?.resources.limits['nvidia.com/gpu'] ?? 1);
    const slots = free(cluster.name, gpus);
    if (slots === null) return false;
    const store = cluster.api.store;
    const template = aGpuPod(job.metadata.namespace ?? '', `${job.metadata.name}-0`, { gpus, node: slots[0]?.node, job });
    // Created when it starts, not when the store happens to be called: the seeded running Jobs
    // started hours before the store's clock reads.
    template.metadata.creationTimestamp = new Date(at).toISOString();
    const pod = store.create('pods', template);
    const started = store.patchStatus('pods', pod.metadata, running(at));
    store.patchStatus('jobs', job.metadata, { startTime: new Date(at).toISOString(), active: 1 });
    // Some Jobs hold their GPUs and barely use them (the idle GPU-hours the demo shows); some hit an
    // XID error (79: fallen off the bus), which makes them gpu_error if they then fail. Decided by the
    // name, so the world's random draws stay as they were.
    const busyness = 35 + random() * 60;
    const name = job.metadata.name ?? '';
    for (const slot of slots) {
      slot.busy = true;
      slot.exporter.assignPod(slot.uuid, { pod: started.metadata.name, namespace: started.metadata.namespace ?? '', container: 'main' });
      const percent = busyness + random() * 5;
      slot.exporter.setValues(slot.uuid, { ...utilization(idleJob(name) ? percent / 30 : percent, random), DCGM_FI_DEV_XID_ERRORS: xidJob(name) ? 79 : 0 });
    }
    live.get(cluster.name)?.push({ job, pod: started, slots, startedAt: at });
    return true;
  };

  const finish = (cluster: DemoCluster, entry: LiveJob, at: number): void => {
    const failed = random() < 0.2;
    const store = cluster.api.store;
    // The shape follows from the Job's name: no random draw, so the rest of the world is as before.
    const shape = failed ? failureShapeOf(entry.job.metadata.name) : undefined;
    store.patchStatus('pods', entry.pod.metadata, shape === undefined ? finished(entry.startedAt, at, 0) : failedPodStatus(shape, entry.startedAt, at));
    store.patchStatus('jobs', entry.job.metadata, {
      startTime: new Date(entry.startedAt).toISOString(),
      ...(failed ? { failed: 1 } : { succeeded: 1, completionTime: new Date(at).toISOString() }),
      conditions: [
        shape === undefined
          ? { type: 'Complete', status: 'True', lastTransitionTime: new Date(at).toISOString() }
          : jobFailedCondition(shape, at, `${entry.pod.metadata.namespace ?? ''}/${entry.pod.metadata.name}`),
      ],
    });
    for (const slot of entry.slots) {
      slot.busy = false;
      slot.exporter.assignPod(slot.uuid, undefined);
      slot.exporter.setValues(slot.uuid, { ...utilization(0, random), DCGM_FI_DEV_XID_ERRORS: 0 });
    }
  };

  const submit = (cluster: DemoCluster, at: number): KubeObject => {
    const plan = CLUSTERS.find((c) => c.name === cluster.name) as ClusterPlan;
    const job = cluster.api.store.create('jobs', jobObject(pick(random, NAMESPACES), pick(random, [1, 2, 4, plan.gpusPerNode]), at));
    pending.get(cluster.name)?.push(job);
    return job;
  };

  // Fill about two thirds of the GPUs with running Jobs, and leave a few pending.
  for (const cluster of clusters) {
    const slots = slotsByCluster.get(cluster.name) ?? [];
    let attempts = 0;
    while (slots.filter((s) => s.busy).length < slots.length * 0.65 && attempts < 200) {
      attempts += 1;
      const submitted = options.now - Math.floor(random() * 6 * HOUR) - 60_000;
      const job = submit(cluster, submitted);
      pending.get(cluster.name)?.pop();
      // Started after its submission (drawn apart, a Job could start before it was submitted), and by now.
      if (start(cluster, job, Math.min(options.now, submitted + Math.floor(random() * MAX_QUEUE_WAIT)))) counts.running += 1;
      else pending.get(cluster.name)?.push(job);
    }
    for (let i = 0; i < 4; i += 1) submit(cluster, options.now - Math.floor(random() * 30 * 60_000));
    counts.pending += pending.get(cluster.name)?.length ?? 0;
  }
  // A MIG node and a time-sliced node in the home cluster, each with Jobs on it (shared-gpus.ts).
  counts.running += seedSharedGpus((clusters[0] as DemoCluster).api.store, options.now);
  // And a DRA node there, whose pods hold whole GPUs, a MIG device and a shared GPU through claims (dra-gpus.ts).
  counts.running += seedDraGpus((clusters[0] as DemoCluster).api.store, options.now);
  // Every node Ready but the faulty ones, once all are there.
  for (const cluster of clusters) reportNodeStates(cluster.api.store, options.now);

  const remoteDir = join(options.dir, 'remote-clusters');
  mkdirSync(remoteDir, { recursive: true });
  for (const cluster of clusters.slice(1)) writeFileSync(join(remoteDir, `${cluster.name}.kubeconfig`), cluster.api.kubeconfig());

  return {
    home: clusters[0] as DemoCluster,
    clusters,
    remoteDir,
    exporterPort: fleet.port,
    jobs: counts,
    step(now) {
      for (const cluster of clusters) {
        const running = live.get(cluster.name) ?? [];
        if (running.length > 0 && random() < 0.6) {
          const [entry] = running.splice(Math.floor(random() * running.length), 1);
          if (entry !== undefined) finish(cluster, entry, now);
        }
        const queue = pending.get(cluster.name) ?? [];
        const next = queue[0];
        if (next !== undefined && start(cluster, next, now)) queue.shift();
        if (queue.length < 6) submit(cluster, now);
        // Utilization drifts on the busy GPUs, as real jobs' phases change.
        for (const entry of running) {
          for (const slot of entry.slots) {
            if (random() >= 0.3) continue;
            // Drawn for idle Jobs too, so that the other Jobs' values stay as they were.
            const values = utilization(30 + random() * 70, random);
            if (!idleJob(entry.job.metadata.name ?? '')) slot.exporter.setValues(slot.uuid, { ...values, DCGM_FI_DEV_XID_ERRORS: xidJob(entry.job.metadata.name ?? '') ? 79 : 0 });
          }
        }
      }
    },
    async close() {
      await fleet.close();
      await Promise.all(clusters.map((c) => c.api.close()));
    },
  };
}

/** About one Job in six idles on its GPUs, below the 5 % threshold. */
const idleJob = (name: string): boolean => nameHash(name) % 6 === 1;
/** About one Job in eight reports an XID error while it runs. */
const xidJob = (name: string): boolean => nameHash(name) % 8 === 3;

/** Plausible dcgm-exporter values for a GPU busy at `percent`. */
function utilization(percent: number, random: () => number) {
  const util = Math.max(0, Math.min(100, Math.round(percent)));
  const used = Math.round(2000 + (util / 100) * 70000 * (0.6 + random() * 0.4));
  return {
    DCGM_FI_DEV_GPU_UTIL: util,
    DCGM_FI_PROF_GR_ENGINE_ACTIVE: Math.round(util * (0.85 + random() * 0.1)) / 100,
    DCGM_FI_DEV_FB_USED: used,
    DCGM_FI_DEV_FB_FREE: 81559 - used,
    DCGM_FI_DEV_GPU_TEMP: Math.round(34 + util * 0.42 + random() * 4),
    DCGM_FI_DEV_POWER_USAGE: Math.round((70 + util * 6.2 + random() * 20) * 1000) / 1000,
  };
}
