// One cluster's GPU nodes, live: its Nodes (node-facts.ts), the DRA devices its ResourceSlices
// publish per node, and what its running pods hold (node-allocations.ts). Every replica keeps one
// per watched cluster, writer or standby, so any of them answers GET /v1/fleet/nodes.
import type { Clock } from '../domain/clock.js';
import { gpuSplit, type FleetNode } from '../domain/fleet.js';
import type { IntervalObserver } from '../domain/interval-observer.js';
import type { DraDevice } from '../k8s/gpus/dra-share.js';
import { sliceDevices } from '../k8s/gpus/dra-share.js';
import { draGpus, type NodeGpus } from '../k8s/gpus/physical-gpus.js';
import type { ResourceSlice } from '../k8s/objects/dra-types.js';
import type { Node } from '../k8s/objects/k8s-types.js';
import type { ResourceEvent } from '../k8s/objects/resource-event.js';
import { SnapshotPages } from '../k8s/objects/snapshot-pages.js';
import { NodeAllocations } from './node-allocations.js';
import { nodeFacts, type NodeFacts, type NodeReading } from './node-facts.js';
import { NO_NODE_LABELS, NodeLedger } from './node-ledger.js';

type SlicedDevice = DraDevice & { driver: string };

interface SliceOnNode {
  node: string;
  devices: SlicedDevice[];
}

export interface FleetCluster {
  clusterId: string;
  organizationId: string;
}

export class ClusterFleet {
  readonly allocations: NodeAllocations;
  /** Each node's GPU time by minute, from the moment the fleet is known. */
  readonly ledger: NodeLedger;
  /** What the cluster's indexer tells of its pods' intervals. */
  readonly intervals: IntervalObserver;
  readonly #cluster: FleetCluster;
  readonly #clock: Clock;
  #nodesListed = false;
  #dra: { version: number; byNode: Map<string, NodeGpus> } | undefined;
  readonly #nodes = new Map<string, NodeFacts>();
  readonly #slices = new Map<string, SliceOnNode>();
  readonly #nodePages: SnapshotPages<Node, NodeFacts>;
  readonly #slicePages = new SnapshotPages<ResourceSlice, [string, SliceOnNode | null]>(sliceOnNode);
  #version = 0;
  #answer: { version: number; allocations: number; nodes: readonly FleetNode[] } | undefined;

  constructor(cluster: FleetCluster, reading: NodeReading, history: { clock: Clock; bucketMs: number }) {
    this.#cluster = cluster;
    this.#clock = history.clock;
    this.#nodePages = new SnapshotPages((node) => nodeFacts(node, reading));
    this.ledger = new NodeLedger(cluster.clusterId, history.bucketMs);
    const allocations = new NodeAllocations((node) => this.#record([node]));
    this.allocations = allocations;
    this.intervals = {
      interval: (interval, nodeName) => allocations.interval(interval, nodeName),
      closed: (workloadIds) => allocations.closed(workloadIds),
      retainPods: (podUids) => {
        allocations.retainPods(podUids);
        this.#beginWhenKnown();
      },
    };
  }

  onNodeEvent(event: ResourceEvent<Node>): void {
    if (event.type === 'PAGE' || event.type === 'SYNC') {
      const items = this.#nodePages.take(event);
      if (items === undefined) return;
      const before = [...this.#nodes.keys()];
      this.#nodes.clear();
      for (const facts of items) if (facts.name !== '') this.#nodes.set(facts.name, facts);
      this.#version += 1;
      this.#nodesListed = true;
      this.#record([...before, ...this.#nodes.keys()]);
      this.#beginWhenKnown();
      return;
    }
    const facts = this.#nodePages.reduce(event.object);
    if (facts.name === '') return;
    if (event.type === 'DELETED') this.#nodes.delete(facts.name);
    else this.#nodes.set(facts.name, facts);
    this.#version += 1;
    this.#record([facts.name]);
  }

  onSliceEvent(event: ResourceEvent<ResourceSlice>): void {
    if (event.type === 'PAGE' || event.type === 'SYNC') {
      const items = this.#slicePages.take(event);
      if (items === undefined) return;
      const before = [...this.#slices.values()].map((slice) => slice.node);
      this.#slices.clear();
      for (const [name, slice] of items) if (slice !== null) this.#slices.set(name, slice);
      this.#version += 1;
      this.#record([...before, ...[...this.#slices.values()].map((slice) => slice.node)]);
      return;
    }
    const [name, slice] = sliceOnNode(event.object);
    const before = this.#slices.get(name)?.node;
    if (event.type === 'DELETED' || slice === null) this.#slices.delete(name);
    else this.#slices.set(name, slice);
    this.#version += 1;
    this.#record([...(before === undefined ? [] : [before]), ...(slice === null ? [] : [slice.node])]);
  }

  get organizationId(): string {
    return this.#cluster.organizationId;
  }

  /** The cluster's GPU nodes now, by name; kept while neither the nodes nor the allocations move. */
  nodes(): readonly FleetNode[] {
    const answer = this.#answer;
    if (answer?.version === this.#version && answer.allocations === this.allocations.version) return answer.nodes;
    const nodes: FleetNode[] = [];
    for (const facts of this.#nodes.values()) {
      const node = this.#gpuNode(facts);
      if (node !== null) nodes.push(node);
    }
    nodes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#answer = { version: this.#version, allocations: this.allocations.version, nodes };
    return nodes;
  }

  /** The node's GPUs now; null for a node without any. */
  #gpuNode(facts: NodeFacts): FleetNode | null {
    const gpus = facts.devicePlugin.gpus > 0 ? facts.devicePlugin : (this.#draByNode().get(facts.name) ?? facts.devicePlugin);
    return gpus.gpus <= 0 ? null : this.#fleetNode(facts, gpus);
  }

  /** Tells the ledger how these nodes' GPUs split from now on (each once). */
  #record(names: Iterable<string>): void {
    const at = this.#clock.now();
    for (const name of new Set(names)) {
      const facts = this.#nodes.get(name);
      const node = facts === undefined ? null : this.#gpuNode(facts);
      if (facts === undefined || node === null) {
        this.ledger.set(name, at, null, NO_NODE_LABELS);
        continue;
      }
      const split = gpuSplit(node);
      this.ledger.set(
        name,
        at,
        { capacity: split.totalGpus, unavailable: split.unavailableGpus, allocated: split.allocatedGpus },
        // The capacity type is the node's own (its facts): the view the API answers with has none.
        { gpuModel: node.gpuModel, instanceType: node.instanceType, capacityType: facts.capacityType },
      );
    }
  }

  /** The record begins once both the nodes and what the pods hold on them are known. */
  #beginWhenKnown(): void {
    if (this.#nodesListed && this.allocations.relisted) this.ledger.begin(this.#clock.now());
  }

  #fleetNode(facts: NodeFacts, gpus: NodeGpus): FleetNode {
    return {
      clusterId: this.#cluster.clusterId,
      organizationId: this.#cluster.organizationId,
      name: facts.name,
      gpuModel: gpus.model,
      instanceType: facts.instanceType,
      sharing: gpus.sharing,
      state: facts.state,
      totalGpus: gpus.gpus,
      unhealthyGpus: gpus.unhealthyGpus,
      allocatedGpus: Math.min(gpus.gpus, this.allocations.allocatedOn(facts.name)),
    };
  }

  /** The physical GPUs of each node's DRA devices, over all the slices that name it (kept while the slices stand still). */
  #draByNode(): Map<string, NodeGpus> {
    if (this.#dra?.version === this.#version) return this.#dra.byNode;
    const devices = new Map<string, SlicedDevice[]>();
    for (const slice of this.#slices.values()) {
      let list = devices.get(slice.node);
      if (list === undefined) devices.set(slice.node, (list = []));
      list.push(...slice.devices);
    }
    const byNode = new Map([...devices].map(([node, list]) => [node, draGpus(list)]));
    this.#dra = { version: this.#version, byNode };
    return byNode;
  }
}

/** A slice's name and what it publishes on its node; null for a slice of no node (network-attached devices). */
function sliceOnNode(slice: ResourceSlice): [string, SliceOnNode | null] {
  const name = slice.metadata?.name ?? '';
  const node = slice.spec?.nodeName ?? '';
  if (node === '') return [name, null];
  const driver = slice.spec?.driver ?? '';
  return [name, { node, devices: [...sliceDevices(slice).values()].map((device) => ({ ...device, driver })) }];
}
