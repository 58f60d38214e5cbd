// The GPU time of one cluster's nodes, integrated exactly as it passes: each node's split (how many
// of its GPUs are allocated, unavailable, in all) holds from one change to the next, and its
// GPU-milliseconds go into clock buckets (a minute by default: fleet_history_resolution_seconds).
// Every replica keeps one, writer or standby, so that
// whoever takes the cluster over holds the buckets its previous writer had not written yet
// (fleet-ledger-writer.ts writes the closed buckets, summed by hour).
//
// The record begins at the first bucket boundary after the fleet is known (its nodes listed and its
// pods' intervals told): a bucket before that would count GPUs as absent that were only not seen yet.
import type { CapacityType } from '../domain/capacity-type.js';
import { HOUR_MS, type FleetHourRow } from '../domain/fleet-ledger.js';

/** A node's GPUs from an instant on, whole-GPU equivalents. */
export interface NodeRates {
  capacity: number;
  unavailable: number;
  allocated: number;
}

export interface NodeLabels {
  gpuModel: string | null;
  instanceType: string;
  capacityType: CapacityType | null;
}

/** The labels of a node the ledger holds no labels of (it never had GPUs while watched). */
export const NO_NODE_LABELS: Readonly<NodeLabels> = Object.freeze({ gpuModel: null, instanceType: '', capacityType: null });

interface Tracked {
  rates: NodeRates;
  labels: NodeLabels;
  /** Up to when its GPU time is in the buckets. */
  last: number;
}

const CAPACITY = 0;
const UNAVAILABLE = 1;
const ALLOCATED = 2;

/** The hours of the buckets, as the history keeps them, without the cluster's organization. */
export type LedgerHour = Omit<FleetHourRow, 'organizationId'>;

export class NodeLedger {
  readonly #clusterId: string;
  readonly #nodes = new Map<string, Tracked>();
  readonly #bucketMs: number;
  /** bucket start → node → GPU·ms [capacity, unavailable, allocated]. */
  readonly #buckets = new Map<number, Map<string, Float64Array>>();
  /** The labels a node had last, kept while a bucket holds it (a node gone still has its buckets written). */
  readonly #labels = new Map<string, NodeLabels>();
  #recordFrom: number | null = null;
  /** hour → node → idle GPU·ms the telemetry judged, not written yet (it judges a minute after it ends). */
  readonly #idle = new Map<number, Map<string, number>>();

  /** `bucketMs` divides an hour. */
  constructor(clusterId: string, bucketMs: number) {
    if (!(Number.isInteger(bucketMs) && bucketMs > 0 && HOUR_MS % bucketMs === 0)) {
      throw new Error(`Cannot keep the GPU time of cluster "${clusterId}": a bucket of ${bucketMs} ms does not divide an hour`);
    }
    this.#clusterId = clusterId;
    this.#bucketMs = bucketMs;
  }

  get bucketMs(): number {
    return this.#bucketMs;
  }

  /** The bucket boundary from which every bucket held is whole; null before the fleet is known. */
  get recordFrom(): number | null {
    return this.#recordFrom;
  }

  /** The fleet is known from `at` on: the record begins at the next bucket boundary. */
  begin(at: number): void {
    if (this.#recordFrom !== null) return;
    this.#recordFrom = Math.ceil(at / this.#bucketMs) * this.#bucketMs;
    for (const tracked of this.#nodes.values()) tracked.last = Math.max(tracked.last, at);
  }

  /** The node's GPUs from `at` on; null: it is gone, or holds no GPU. */
  set(node: string, at: number, rates: NodeRates | null, labels: NodeLabels): void {
    const tracked = this.#nodes.get(node);
    if (tracked !== undefined) this.#accrue(node, tracked, at);
    if (rates === null) {
      this.#nodes.delete(node);
      return;
    }
    this.#labels.set(node, labels);
    if (tracked === undefined) this.#nodes.set(node, { rates, labels, last: at });
    else {
      tracked.rates = rates;
      tracked.labels = labels;
    }
  }

  /** GPU·ms of `node` at `at` that the idle rule judged idle; nothing before the record began. */
  addIdle(node: string, at: number, ms: number): void {
    if (this.#recordFrom === null || at < this.#recordFrom || !(ms > 0)) return;
    const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
    let nodes = this.#idle.get(hour);
    if (nodes === undefined) this.#idle.set(hour, (nodes = new Map()));
    nodes.set(node, (nodes.get(node) ?? 0) + ms);
  }

  /** The idle GPU·ms not written yet, by node and hour, taken out (putBack returns them after a failed write). */
  takeIdle(): LedgerHour[] {
    const rows: LedgerHour[] = [];
    for (const [hour, nodes] of this.#idle) {
      for (const [node, idleMs] of nodes) {
        const labels = this.#labels.get(node) ?? NO_NODE_LABELS;
        rows.push({ clusterId: this.#clusterId, node, hour, ...labels, capacityMs: 0, unavailableMs: 0, allocatedMs: 0, idleMs });
      }
    }
    this.#idle.clear();
    return rows;
  }

  putBackIdle(rows: readonly LedgerHour[]): void {
    for (const row of rows) {
      let nodes = this.#idle.get(row.hour);
      if (nodes === undefined) this.#idle.set(row.hour, (nodes = new Map()));
      nodes.set(row.node, (nodes.get(row.node) ?? 0) + row.idleMs);
    }
  }

  /** Puts every node's GPU time up to `at` into the buckets. */
  advance(at: number): void {
    for (const [node, tracked] of this.#nodes) this.#accrue(node, tracked, at);
  }

  /**
   * The buckets of [from, to) summed by node and hour (both bucket boundaries); buckets before the
   * record began are not held and add nothing.
   */
  hours(from: number, to: number): LedgerHour[] {
    const byKey = new Map<string, LedgerHour>();
    for (const [bucket, nodes] of this.#buckets) {
      if (bucket < from || bucket >= to) continue;
      const hour = Math.floor(bucket / HOUR_MS) * HOUR_MS;
      for (const [node, ms] of nodes) {
        const key = `${hour}\u0000${node}`;
        let row = byKey.get(key);
        if (row === undefined) {
          const labels = this.#labels.get(node) ?? NO_NODE_LABELS;
          row = { clusterId: this.#clusterId, node, hour, ...labels, capacityMs: 0, unavailableMs: 0, allocatedMs: 0, idleMs: 0 };
          byKey.set(key, row);
        }
        row.capacityMs += ms[CAPACITY] ?? 0;
        row.unavailableMs += ms[UNAVAILABLE] ?? 0;
        row.allocatedMs += ms[ALLOCATED] ?? 0;
      }
    }
    return [...byKey.values()].sort((a, b) => a.hour - b.hour || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  }

  /**
   * Drops the buckets before `before` (a bucket boundary), and the labels of nodes no bucket or live
   * node holds; the record is then whole from `before` at the earliest.
   */
  forget(before: number): void {
    for (const bucket of [...this.#buckets.keys()]) if (bucket < before) this.#buckets.delete(bucket);
    // Idle time no writer took while it was kept (this replica stood by) goes with it.
    for (const hour of [...this.#idle.keys()]) if (hour + HOUR_MS <= before) this.#idle.delete(hour);
    if (this.#recordFrom !== null) this.#recordFrom = Math.max(this.#recordFrom, before);
    const held = new Set(this.#nodes.keys());
    for (const nodes of this.#buckets.values()) for (const node of nodes.keys()) held.add(node);
    for (const nodes of this.#idle.values()) for (const node of nodes.keys()) held.add(node);
    for (const node of [...this.#labels.keys()]) if (!held.has(node)) this.#labels.delete(node);
  }

  #accrue(node: string, tracked: Tracked, to: number): void {
    const recordFrom = this.#recordFrom;
    let from = Math.max(tracked.last, recordFrom ?? to);
    tracked.last = Math.max(tracked.last, to);
    const { capacity, unavailable, allocated } = tracked.rates;
    if (capacity === 0) return;
    while (from < to) {
      const bucket = Math.floor(from / this.#bucketMs) * this.#bucketMs;
      const end = Math.min(to, bucket + this.#bucketMs);
      const span = end - from;
      let nodes = this.#buckets.get(bucket);
      if (nodes === undefined) this.#buckets.set(bucket, (nodes = new Map()));
      let ms = nodes.get(node);
      if (ms === undefined) nodes.set(node, (ms = new Float64Array(3)));
      ms[CAPACITY] = (ms[CAPACITY] ?? 0) + capacity * span;
      ms[UNAVAILABLE] = (ms[UNAVAILABLE] ?? 0) + unavailable * span;
      ms[ALLOCATED] = (ms[ALLOCATED] ?? 0) + allocated * span;
      from = end;
    }
  }
}
