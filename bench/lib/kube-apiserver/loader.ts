// Loads a generated cluster (bench/data/generate-cluster.ts) into a real kube-apiserver, in two phases:
//
// 1. Through the API, as controllers and kubelets would: Namespaces and Nodes (a Node keeps its status
//    on create), then Jobs and pods by POST and their status through the status subresource (POST
//    resets status; a Pending pod needs none), `concurrency` units at a time, for a fixed time. The
//    server assigns uids, so a Job's pods are created after it, owned by its real uid. This measures
//    the create rate: about 100 pods/s (230 writes/s) on the shared 2 cores, far too slow for 150k.
// 2. The rest straight into etcd, encoded as the API server itself stores objects (protobuf, see
//    protobuf.ts), with the generator's uids and times; then it waits until the API
//    server's watch cache has every write. Its LISTs then read exactly what they would have read had
//    the API written it, except managedFields, which objects written this way lack (so their JSON is
//    smaller, which only makes the API server's LISTs faster).
//
// A unit is a Job with its pods, or one standalone pod, and units are interleaved in proportion, so
// whatever was loaded when a deadline came is a consistent, representative subset: every loaded Job
// has all its pods.
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import type { GeneratedCluster } from '../../data/generate-cluster.js';
import { round } from '../report/format.js';
import type { ApiServerClient } from './client.js';
import { EtcdWriter, registryKey } from './etcd.js';
import { StorageEncoder } from './protobuf.js';

const MERGE = 'application/merge-patch+json';
const CONTROLLER_UID_LABELS = ['batch.kubernetes.io/controller-uid', 'controller-uid'];

type Unit = { kind: 'job'; job: KubeObject; pods: KubeObject[] } | { kind: 'pod'; pod: KubeObject };

export interface NamespaceCounts {
  pods: number;
  runningPods: number;
  /** Workloads the service should index as this namespace's: its Jobs and its standalone pods. */
  workloads: number;
  /** Of which running: Jobs started and not finished, standalone pods in phase Running. */
  runningWorkloads: number;
  /** Standalone pods whose own gpucap.io/initiative label (always "<namespace's>-adhoc") overrides the namespace's. */
  relabelledPods: number;
  relabelledRunningPods: number;
}

/** A pod written to etcd, to check what the API server serves for it. */
export interface PodSample {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  nodeName: string | undefined;
}

export interface ApiPhase {
  concurrency: number;
  seconds: number;
  namespacesAndNodesSeconds: number;
  jobs: number;
  pods: number;
  writes: number;
  writesPerSecond: number;
  podsPerSecond: number;
}

export interface EtcdPhase {
  seconds: number;
  /** Of which: waiting for the API server's watch cache to hold every write. */
  watchCacheSeconds: number;
  jobs: number;
  pods: number;
  puts: number;
  transactions: number;
  bytes: number;
  podsPerSecond: number;
  /** JSON fields of the generated objects that the v1.20 schema lacks, dropped as its API would drop them. */
  droppedFields: string[];
  /** A few of the pods written, spread over the phase. */
  samples: PodSample[];
}

export interface LoadedCluster {
  namespaces: number;
  nodes: number;
  jobs: number;
  jobPods: number;
  standalonePods: number;
  pods: number;
  /** One row per loaded Job and per loaded standalone pod (every generated pod requests GPUs). */
  expectedWorkloads: number;
  podsByPhase: Record<string, number>;
  /** Generated units left out because a deadline came first. */
  skippedUnits: number;
  api: ApiPhase;
  etcd: EtcdPhase;
  byNamespace: Record<string, NamespaceCounts>;
}

export class ClusterLoader {
  private readonly units: Unit[];
  private next = 0;
  private readonly byNamespace: Record<string, NamespaceCounts> = {};
  private readonly podsByPhase: Record<string, number> = {};
  private readonly counts = { jobs: 0, jobPods: 0, standalonePods: 0 };
  private api: ApiPhase | undefined;
  private etcd: EtcdPhase | undefined;

  constructor(
    private readonly client: ApiServerClient,
    private readonly cluster: GeneratedCluster,
    private readonly log: (line: string) => void,
  ) {
    this.units = interleave(cluster);
  }

  /** Namespaces and Nodes, then units for `seconds`, all through the API. */
  async loadThroughApi(options: { concurrency: number; seconds: number }): Promise<ApiPhase> {
    const started = performance.now();
    let writes = 0;
    const write = (method: string, path: string, body: unknown, contentType?: typeof MERGE): Promise<KubeObject> => {
      writes += 1;
      return this.client.call<KubeObject>(method, path, body, contentType);
    };
    const { namespaces, nodes } = this.cluster;
    await pool(namespaces, options.concurrency, (ns) => write('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.metadata.name, labels: ns.metadata.labels } }));
    await pool(nodes, options.concurrency, (node) =>
      write('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name, labels: node.metadata.labels }, spec: node.spec, status: node.status }),
    );
    const namespacesAndNodesSeconds = (performance.now() - started) / 1000;

    const createPod = async (pod: KubeObject, owner?: { uid: string }) => {
      const namespace = pod.metadata.namespace ?? '';
      const labels = { ...pod.metadata.labels };
      const ownerReferences = pod.metadata.ownerReferences as Record<string, unknown>[] | undefined;
      if (owner !== undefined) for (const label of CONTROLLER_UID_LABELS) if (label in labels) labels[label] = owner.uid;
      await write('POST', `/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod.metadata.name, labels, ...(owner === undefined || ownerReferences === undefined ? {} : { ownerReferences: ownerReferences.map((r) => ({ ...r, uid: owner.uid })) }) },
        spec: pod.spec,
      });
      if (phaseOf(pod) !== 'Pending') await write('PATCH', `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/status`, { status: pod.status }, MERGE);
    };
    const unitsStarted = performance.now();
    const deadline = unitsStarted + options.seconds * 1000;
    const before = { ...this.counts };
    const worker = async () => {
      while (performance.now() < deadline) {
        const unit = this.units[this.next++];
        if (unit === undefined) return;
        if (unit.kind === 'pod') {
          await createPod(unit.pod);
        } else {
          const { metadata, status } = unit.job as { metadata: KubeObject['metadata']; status: Record<string, unknown> };
          const created = await write('POST', `/apis/batch/v1/namespaces/${metadata.namespace}/jobs`, jobBody(unit.job));
          if (Object.keys(status).length > 0) await write('PATCH', `/apis/batch/v1/namespaces/${metadata.namespace}/jobs/${metadata.name}/status`, { status }, MERGE);
          for (const pod of unit.pods) await createPod(pod, { uid: created.metadata.uid ?? '' });
        }
        this.count(unit);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const unitSeconds = (performance.now() - unitsStarted) / 1000;
    const pods = this.counts.jobPods + this.counts.standalonePods - before.jobPods - before.standalonePods;
    const seconds = (performance.now() - started) / 1000;
    this.api = {
      concurrency: options.concurrency,
      seconds: round(seconds),
      namespacesAndNodesSeconds: round(namespacesAndNodesSeconds),
      jobs: this.counts.jobs - before.jobs,
      pods,
      writes,
      writesPerSecond: Math.round(writes / seconds),
      podsPerSecond: Math.round(pods / unitSeconds),
    };
    return this.api;
  }

  /**
   * The remaining units (up to `maxPods` pods in all, and until `deadline`) straight into etcd, then
   * waits until the API server's watch cache holds them.
   */
  async loadThroughEtcd(etcdUrl: string, options: { maxPods: number; deadline: number }): Promise<EtcdPhase> {
    const started = performance.now();
    const encoder = new StorageEncoder();
    const writer = new EtcdWriter(etcdUrl);
    const before = { ...this.counts };
    const pending: { key: string; value: Buffer; tag: string }[] = [];
    const loadedPods = () => this.counts.jobPods + this.counts.standalonePods;
    const samples: PodSample[] = [];
    let lastLog = started;
    await writer.putAll(() => {
      if (pending.length === 0) {
        if (performance.now() - lastLog > 10_000) {
          lastLog = performance.now();
          this.log(`    … ${loadedPods().toLocaleString('en-US')} pods loaded (${writer.puts.toLocaleString('en-US')} etcd puts in ${((lastLog - started) / 1000).toFixed(0)} s)`);
        }
        if (performance.now() >= options.deadline || loadedPods() >= options.maxPods) return undefined;
        const unit = this.units[this.next];
        if (unit === undefined) return undefined;
        this.next += 1;
        this.count(unit);
        const pods = unit.kind === 'pod' ? [unit.pod] : unit.pods;
        if (unit.kind === 'job') pending.push({ key: registryKey('Job', unit.job.metadata.name, unit.job.metadata.namespace), value: encoder.encode('Job', unit.job), tag: 'jobs' });
        if (this.next % 97 === 0 && samples.length < 20) {
          const pod = pods[0];
          if (pod !== undefined) samples.push({ namespace: pod.metadata.namespace ?? '', name: pod.metadata.name, uid: pod.metadata.uid ?? '', phase: phaseOf(pod), nodeName: (pod.spec as { nodeName?: string }).nodeName });
        }
        for (const pod of pods) pending.push({ key: registryKey('Pod', pod.metadata.name, pod.metadata.namespace), value: encoder.encode('Pod', pod), tag: 'pods' });
      }
      return pending.shift();
    });
    const written = performance.now();
    await this.waitForWatchCache(writer.revisions, options.deadline + 60_000);
    const pods = loadedPods() - before.jobPods - before.standalonePods;
    const seconds = (performance.now() - started) / 1000;
    this.etcd = {
      seconds: round(seconds),
      watchCacheSeconds: round((performance.now() - written) / 1000),
      jobs: this.counts.jobs - before.jobs,
      pods,
      puts: writer.puts,
      transactions: writer.transactions,
      bytes: writer.bytes,
      podsPerSecond: Math.round(pods / seconds),
      droppedFields: [...encoder.dropped].sort(),
      samples,
    };
    return this.etcd;
  }

  summary(): LoadedCluster {
    if (this.api === undefined || this.etcd === undefined) throw new Error('Cannot summarize the load before both phases ran');
    return {
      namespaces: this.cluster.namespaces.length,
      nodes: this.cluster.nodes.length,
      ...this.counts,
      pods: this.counts.jobPods + this.counts.standalonePods,
      expectedWorkloads: this.counts.jobs + this.counts.standalonePods,
      podsByPhase: this.podsByPhase,
      skippedUnits: this.units.length - this.next,
      api: this.api,
      etcd: this.etcd,
      byNamespace: this.byNamespace,
    };
  }

  private count(unit: Unit): void {
    const namespace = (unit.kind === 'pod' ? unit.pod : unit.job).metadata.namespace ?? '';
    const c = (this.byNamespace[namespace] ??= { pods: 0, runningPods: 0, workloads: 0, runningWorkloads: 0, relabelledPods: 0, relabelledRunningPods: 0 });
    const pods = unit.kind === 'pod' ? [unit.pod] : unit.pods;
    for (const pod of pods) {
      const phase = phaseOf(pod);
      this.podsByPhase[phase] = (this.podsByPhase[phase] ?? 0) + 1;
      c.pods += 1;
      if (phase === 'Running') c.runningPods += 1;
    }
    c.workloads += 1;
    if (unit.kind === 'pod') {
      this.counts.standalonePods += 1;
      if (phaseOf(unit.pod) === 'Running') c.runningWorkloads += 1;
      if (unit.pod.metadata.labels?.['gpucap.io/initiative'] !== undefined) {
        c.relabelledPods += 1;
        if (phaseOf(unit.pod) === 'Running') c.relabelledRunningPods += 1;
      }
    } else {
      this.counts.jobs += 1;
      this.counts.jobPods += unit.pods.length;
      const status = unit.job.status as { startTime?: string; conditions?: unknown[] };
      if (status.startTime !== undefined && status.conditions === undefined) c.runningWorkloads += 1;
    }
  }

  /**
   * Until the pods' and Jobs' watch caches have reached the revision of their last write: a LIST at
   * resourceVersion=0 is served from the cache and answers the cache's revision; a namespace with no
   * pods keeps it small.
   */
  private async waitForWatchCache(revisions: Record<string, number>, deadline: number): Promise<void> {
    const paths: Record<string, string> = { pods: '/api/v1/namespaces/default/pods', jobs: '/apis/batch/v1/namespaces/default/jobs' };
    for (const [tag, revision] of Object.entries(revisions)) {
      const path = paths[tag] ?? '';
      for (;;) {
        const list = await this.client.call<{ metadata: { resourceVersion: string } }>('GET', `${path}?resourceVersion=0`);
        if (Number(list.metadata.resourceVersion) >= revision) break;
        if (performance.now() > deadline) throw new Error(`The API server's watch cache of ${path} stayed at revision ${list.metadata.resourceVersion}, below etcd's ${revision}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}

/**
 * The Job as its author would submit it. The server generates the selector and the template's
 * controller-uid and job-name labels from the uid it assigns (a given selector would be refused), and
 * v1.20 drops fields it does not know (completionMode, podReplacementPolicy, suspend).
 */
function jobBody(job: KubeObject): unknown {
  const { selector: _selector, manualSelector: _manual, template, ...spec } = job.spec as Record<string, unknown> & { template: { metadata?: { labels?: Record<string, string> }; spec: unknown } };
  const labels = Object.fromEntries(Object.entries(template.metadata?.labels ?? {}).filter(([key]) => !CONTROLLER_UID_LABELS.includes(key) && key !== 'job-name' && key !== 'batch.kubernetes.io/job-name'));
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: job.metadata.name, labels: job.metadata.labels },
    spec: { ...spec, template: { metadata: { labels }, spec: template.spec } },
  };
}

/** Jobs (with their pods) and standalone pods, merged so that any prefix holds both in the whole's proportion. */
function interleave(cluster: GeneratedCluster): Unit[] {
  const podsOfJob = new Map<string, KubeObject[]>();
  const standalone: KubeObject[] = [];
  for (const pod of cluster.pods) {
    const owner = (pod.metadata.ownerReferences as { uid: string }[] | undefined)?.[0]?.uid;
    if (owner === undefined) standalone.push(pod);
    else {
      const list = podsOfJob.get(owner);
      if (list === undefined) podsOfJob.set(owner, [pod]);
      else list.push(pod);
    }
  }
  const jobs = cluster.jobs;
  const units: Unit[] = [];
  let j = 0;
  let s = 0;
  while (j < jobs.length || s < standalone.length) {
    const takeJob = s >= standalone.length || (j < jobs.length && j / jobs.length <= s / standalone.length);
    if (takeJob) {
      const job = jobs[j++] as KubeObject;
      units.push({ kind: 'job', job, pods: podsOfJob.get(job.metadata.uid ?? '') ?? [] });
    } else {
      units.push({ kind: 'pod', pod: standalone[s++] as KubeObject });
    }
  }
  return units;
}

function phaseOf(pod: KubeObject): string {
  return (pod.status as { phase?: string } | undefined)?.phase ?? 'Pending';
}

/** Runs `task` over `items`, at most `concurrency` at a time. */
async function pool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let item = items[next++]; item !== undefined; item = items[next++]) await task(item);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
