// The sustained event stream of the sync-ingest benchmark: standalone GPU pods going through their
// life in the simulated API, one store write per step, in a fixed cycle of four that keeps the
// population steady: create a pending pod (ADDED), schedule and start the oldest pending one
// (MODIFIED → running), finish the oldest running one (MODIFIED → completed, or failed one in ten),
// and garbage-collect the oldest finished one (DELETED; its row stays in the index as history).
// Deterministic for a given cluster and seed; times are the caller's clock.
import type { WorkloadStatus } from '../../../src/domain/workload.js';
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import type { KubeStore } from '../../../sim/kube-api/store.js';
import { PodFactory, uidFrom, type GeneratedCluster, type NamespaceInfo } from '../../data/generate-cluster.js';
import { mulberry32 } from '../../../sim/random.js';

export type ChurnKind = 'create' | 'start' | 'finish' | 'delete';

export interface ChurnStep {
  kind: ChurnKind;
  /** The pod's uid: its workload id. */
  uid: string;
  namespace: string;
  /** Statuses the row may show once this write is visible (a later step of the same pod counts too); empty for delete. */
  visibleAs: readonly WorkloadStatus[];
}

const CYCLE: readonly ChurnKind[] = ['create', 'start', 'finish', 'delete'];

/** A FIFO of pod keys (namespace/name) that does not shift the whole array on every take. */
class Queue {
  private items: string[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(key: string): void {
    this.items.push(key);
  }

  take(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head];
    this.head += 1;
    if (this.head > 65_536 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }
}

export class PodChurn {
  private readonly random: () => number;
  private readonly factory: PodFactory;
  private readonly pending = new Queue();
  private readonly running = new Queue();
  private readonly finished = new Queue();
  private readonly namespaces: readonly NamespaceInfo[];
  private steps = 0;
  private created = 0;

  constructor(
    private readonly store: KubeStore,
    cluster: GeneratedCluster,
    private readonly options: { now: () => number; seed?: number },
  ) {
    this.random = mulberry32(options.seed ?? 0xc4a2);
    this.factory = new PodFactory(this.random, cluster.nodeNames);
    this.namespaces = cluster.namespaceInfo;
    for (const pod of cluster.pods) {
      if (pod.metadata.ownerReferences !== undefined) continue;
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      const phase = (pod.status as { phase?: string }).phase;
      if (phase === 'Pending') this.pending.push(key);
      else if (phase === 'Running') this.running.push(key);
      else this.finished.push(key);
    }
  }

  /** Pods in each pool: the stream can run as long as none of them is empty. */
  pools(): { pending: number; running: number; finished: number } {
    return { pending: this.pending.size, running: this.running.size, finished: this.finished.size };
  }

  /** One store write (one watch event); undefined only if a pool ran dry. */
  step(): ChurnStep | undefined {
    const kind = CYCLE[this.steps % CYCLE.length] as ChurnKind;
    this.steps += 1;
    const now = this.options.now();
    if (kind === 'create') {
      const ns = this.namespaces[Math.floor(this.random() * this.namespaces.length)] as NamespaceInfo;
      const user = ns.users[Math.floor(this.random() * ns.users.length)] ?? 'unknown';
      const uid = uidFrom(this.random);
      const name = `churn-${(this.created++).toString(36)}-${uid.slice(0, 5)}`;
      const gpus = [1, 2, 4, 8][Math.floor(this.random() * 4)] ?? 1;
      const pod = this.factory.pending({ namespace: ns.name, name, uid, createdAt: now, labels: { app: 'notebook', 'gpucap.io/submitted-by': user } }, gpus, 'OnFailure');
      this.store.create('pods', pod);
      this.pending.push(`${ns.name}/${name}`);
      return { kind, uid, namespace: ns.name, visibleAs: ['pending', 'running', 'completed', 'failed'] };
    }
    const from = kind === 'start' ? this.pending : kind === 'finish' ? this.running : this.finished;
    const current = this.take(from);
    if (current === undefined) return undefined;
    const uid = current.metadata.uid ?? '';
    const namespace = current.metadata.namespace ?? '';
    const key = `${namespace}/${current.metadata.name}`;
    if (kind === 'delete') {
      this.store.delete('pods', { namespace, name: current.metadata.name });
      return { kind, uid, namespace, visibleAs: [] };
    }
    if (kind === 'start') {
      this.store.update('pods', this.factory.running(current, now));
      this.running.push(key);
      return { kind, uid, namespace, visibleAs: ['running', 'completed', 'failed'] };
    }
    const exitCode = this.random() < 0.1 ? 1 : 0;
    this.store.update('pods', this.factory.finished(current, now, exitCode));
    this.finished.push(key);
    return { kind, uid, namespace, visibleAs: exitCode === 0 ? ['completed'] : ['failed'] };
  }

  private take(queue: Queue): KubeObject | undefined {
    for (;;) {
      const key = queue.take();
      if (key === undefined) return undefined;
      const [namespace = '', name = ''] = key.split('/');
      const found = this.store.get('pods', { namespace, name });
      if (found !== undefined) return found;
    }
  }
}

