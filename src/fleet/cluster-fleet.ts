// One cluster's GPU nodes, live: its Nodes (node-facts.ts), the DRA devices its ResourceSlices
// publish per node, and what its running pods hold (node-allocations.ts). Every replica keeps one
// per watched cluster, writer or standby, so any of them answers GET /v1/fleet/nodes.
import type { FleetNode } from '../domain/fleet.js';
import type { DraDevice } from '../k8s/gpus/dra-share.js';
import { sliceDevices } from '../k8s/gpus/dra-share.js';
import { draGpus, type NodeGpus } from '../k8s/gpus/physical-gpus.js';
import type { ResourceSlice } from '../k8s/objects/dra-types.js';
import type { Node } from '../k8s/objects/k8s-types.js';
import type { ResourceEvent } from '../k8s/objects/resource-event.js';
import { SnapshotPages } from '../k8s/objects/snapshot-pages.js';
import { NodeAllocations } from './node-allocations.js';
import { nodeFacts, type NodeFacts, type NodeReading } from './node-facts.js';

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
  readonly allocations = new NodeAllocations();
  readonly #cluster: FleetCluster;
  readonly #nodes = new Map<string, NodeFacts>();
  readonly #slices = new Map<string, SliceOnNode>();
  readonly #nodePages: SnapshotPages<Node, NodeFacts>;
  readonly #slicePages = new SnapshotPages<ResourceSlice, [string, SliceOnNode | null]>(sliceOnNode);
  #version = 0;
  #answer: { version: number; allocations: number; nodes: readonly FleetNode[] } | undefined;

  constructor(cluster: FleetCluster, reading: NodeReading) {
    this.#cluster = cluster;
    this.#nodePages = new SnapshotPages((node) => nodeFacts(node, reading));
  }

  onNodeEvent(event: ResourceEvent<Node>): void {
    if (event.type === 'PAGE' || event.type === 'SYNC') {
      const items = this.#nodePages.take(event);
      if (items === undefined) return;
      this.#nodes.clear();
      for (const facts of items) if (facts.name !== '') this.#nodes.set(facts.name, facts);
    } else {
      const facts = this.#nodePages.reduce(event.object);
      if (facts.name === '') return;
      if (event.type === 'DELETED') this.#nodes.delete(facts.name);
      else this.#nodes.set(facts.name, facts);
    }
    this.#version += 1;
  }

  onSliceEvent(event: ResourceEvent<ResourceSlice>): void {
    if (event.type === 'PAGE' || event.type === 'SYNC') {
      const items = this.#slicePages.take(event);
      if (items === undefined) return;
      this.#slices.clear();
      for (const [name, slice] of items) if (slice !== null) this.#slices.set(name, slice);
    } else {
      const [name, slice] = sliceOnNode(event.object);
      if (event.type === 'DELETED' || slice === null) this.#slices.delete(name);
      else this.#slices.set(name, slice);
    }
    this.#version += 1;
  }

  /** The cluster's GPU nodes now, by name; kept while neither the nodes nor the allocations move. */
  nodes(): readonly FleetNode[] {
    const answer = this.#answer;
    if (answer?.version === this.#version && answer.allocations === this.allocations.version) return answer.nodes;
    const dra = this.#draByNode();
    const nodes: FleetNode[] = [];
    for (const facts of this.#nodes.values()) {
      const gpus = facts.devicePlugin.gpus > 0 ? facts.devicePlugin : (dra.get(facts.name) ?? facts.devicePlugin);
      if (gpus.gpus <= 0) continue;
      nodes.push(this.#fleetNode(facts, gpus));
    }
    nodes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#answer = { version: this.#version, allocations: this.allocations.version, nodes };
    return nodes;
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

  /** The physical GPUs of each node's DRA devices, over all the slices that name it. */
  #draByNode(): Map<string, NodeGpus> {
    const devices = new Map<string, SlicedDevice[]>();
    for (const slice of this.#slices.values()) {
      let list = devices.get(slice.node);
      if (list === undefined) devices.set(slice.node, (list = []));
      list.push(...slice.devices);
    }
    return new Map([...devices].map(([node, list]) => [node, draGpus(list)]));
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
