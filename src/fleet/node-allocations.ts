// What the running pods of one cluster hold, by node: fed by the cluster's workload indexer with
// every pod GPU interval it queues (open: the pod holds its share on its node; closed or unstarted:
// it holds nothing), the workloads whose open intervals it ends, and the pods a relist kept. It
// follows the indexer whether this replica writes the cluster or stands by, so every replica
// answers the same.
import type { IntervalObserver } from '../domain/interval-observer.js';
import type { PodGpuInterval } from '../domain/workload.js';

interface Held {
  node: string;
  workloadId: string;
  share: number;
}

export class NodeAllocations implements IntervalObserver {
  readonly #pods = new Map<string, Held>();
  /** node → pod uid → share: sums are taken from the pods, never kept as running totals that drift. */
  readonly #byNode = new Map<string, Map<string, number>>();
  readonly #byWorkload = new Map<string, Set<string>>();
  #version = 0;
  #relisted = false;
  readonly #onChange: (node: string) => void;

  /** `onChange` is told each node whose allocations moved, once they did. */
  constructor(onChange: (node: string) => void = () => undefined) {
    this.#onChange = onChange;
  }

  interval(interval: PodGpuInterval, nodeName: string | null): void {
    const share = interval.share ?? interval.gpus;
    const open = interval.startedAt !== null && interval.finishedAt === null;
    const held = this.#pods.get(interval.podUid);
    if (open && nodeName !== null && nodeName !== '' && share > 0) {
      if (held?.node === nodeName && held.share === share && held.workloadId === interval.workloadId) return;
      this.#drop(interval.podUid);
      this.#hold(interval.podUid, { node: nodeName, workloadId: interval.workloadId, share });
    } else if (held !== undefined) {
      this.#drop(interval.podUid);
    }
  }

  closed(workloadIds: readonly string[]): void {
    for (const workloadId of workloadIds) for (const podUid of [...(this.#byWorkload.get(workloadId) ?? [])]) this.#drop(podUid);
  }

  retainPods(podUids: ReadonlySet<string>): void {
    for (const podUid of [...this.#pods.keys()]) if (!podUids.has(podUid)) this.#drop(podUid);
    this.#relisted = true;
  }

  /** Whether the pods were listed once: what they hold is known. */
  get relisted(): boolean {
    return this.#relisted;
  }

  /** Where the workload's running pods hold GPUs: node → its share there. Empty when none runs. */
  nodesOf(workloadId: string): Map<string, number> {
    const nodes = new Map<string, number>();
    for (const podUid of this.#byWorkload.get(workloadId) ?? []) {
      const held = this.#pods.get(podUid);
      if (held !== undefined) nodes.set(held.node, (nodes.get(held.node) ?? 0) + held.share);
    }
    return nodes;
  }

  /** Whole-GPU equivalents the running pods hold on `node`. */
  allocatedOn(node: string): number {
    let sum = 0;
    for (const share of this.#byNode.get(node)?.values() ?? []) sum += share;
    return sum;
  }

  /** Moves on every change: what reads the allocations may keep a result while it stands still. */
  get version(): number {
    return this.#version;
  }

  #hold(podUid: string, held: Held): void {
    this.#pods.set(podUid, held);
    let onNode = this.#byNode.get(held.node);
    if (onNode === undefined) this.#byNode.set(held.node, (onNode = new Map()));
    onNode.set(podUid, held.share);
    let ofWorkload = this.#byWorkload.get(held.workloadId);
    if (ofWorkload === undefined) this.#byWorkload.set(held.workloadId, (ofWorkload = new Set()));
    ofWorkload.add(podUid);
    this.#version += 1;
    this.#onChange(held.node);
  }

  #drop(podUid: string): void {
    const held = this.#pods.get(podUid);
    if (held === undefined) return;
    this.#pods.delete(podUid);
    const onNode = this.#byNode.get(held.node);
    onNode?.delete(podUid);
    if (onNode?.size === 0) this.#byNode.delete(held.node);
    const ofWorkload = this.#byWorkload.get(held.workloadId);
    ofWorkload?.delete(podUid);
    if (ofWorkload?.size === 0) this.#byWorkload.delete(held.workloadId);
    this.#version += 1;
    this.#onChange(held.node);
  }
}
