// The GPU nodes of every watched cluster, live: a ClusterFleet per cluster, attached beside its
// indexer (the Node and ResourceSlice events come here, the pod intervals through the indexer's
// observer). It answers the read side's FleetSource port.
import type { Clock } from '../domain/clock.js';
import type { IntervalObserver } from '../domain/interval-observer.js';
import type { FleetNode } from '../domain/fleet.js';
import type { WatchedResource } from '../domain/cluster-status.js';
import type { ResourceSlice } from '../k8s/objects/dra-types.js';
import type { Node } from '../k8s/objects/k8s-types.js';
import type { ResourceEvent } from '../k8s/objects/resource-event.js';
import type { FleetSource } from '../query/ports.js';
import { ClusterFleet } from './cluster-fleet.js';
import type { NodeReading } from './node-facts.js';
import type { NodeLedger } from './node-ledger.js';

export interface FleetInventoryOptions extends NodeReading {
  defaultOrganizationId: string;
  clock: Clock;
  /** The buckets of each node's GPU time (fleet_history_resolution_seconds). */
  bucketMs: number;
}

export interface ClusterLedger {
  clusterId: string;
  organizationId: string;
  ledger: NodeLedger;
}

/** The handler the informers of one cluster call, and how to let go of the cluster (ClusterConsumer). */
export interface AttachedFleet {
  onEvent(resource: WatchedResource, event: ResourceEvent<unknown>, namespace: string | undefined): void;
  detach(): Promise<void>;
}

export class FleetInventory implements FleetSource {
  readonly #options: FleetInventoryOptions;
  readonly #clusters = new Map<string, ClusterFleet>();
  readonly #byOrganization = new Map<string, { parts: readonly (readonly FleetNode[])[]; nodes: readonly FleetNode[] }>();

  constructor(options: FleetInventoryOptions) {
    this.#options = options;
  }

  attach(cluster: { clusterId: string; organizationId?: string }): AttachedFleet {
    const fleet = new ClusterFleet(
      { clusterId: cluster.clusterId, organizationId: cluster.organizationId ?? this.#options.defaultOrganizationId },
      this.#options,
      { clock: this.#options.clock, bucketMs: this.#options.bucketMs },
    );
    this.#clusters.set(cluster.clusterId, fleet);
    return {
      onEvent: (resource, event) => {
        if (resource === 'nodes') fleet.onNodeEvent(event as ResourceEvent<Node>);
        else if (resource === 'resourceslices') fleet.onSliceEvent(event as ResourceEvent<ResourceSlice>);
      },
      detach: () => {
        if (this.#clusters.get(cluster.clusterId) === fleet) this.#clusters.delete(cluster.clusterId);
        return Promise.resolve();
      },
    };
  }

  /**
   * Where a cluster's indexer tells of its pods' intervals: to the cluster attached under that id
   * at the time, so the order in which the consumers attach does not matter.
   */
  intervalsOf(clusterId: string): IntervalObserver {
    const intervals = () => this.#clusters.get(clusterId)?.intervals;
    return {
      interval: (interval, nodeName) => intervals()?.interval(interval, nodeName),
      closed: (workloadIds) => intervals()?.closed(workloadIds),
      retainPods: (podUids) => intervals()?.retainPods(podUids),
    };
  }

  /** The GPU-time record of every cluster attached now. */
  ledgers(): ClusterLedger[] {
    return [...this.#clusters].map(([clusterId, fleet]) => ({ clusterId, organizationId: fleet.organizationId, ledger: fleet.ledger }));
  }

  /**
   * A minute of a workload's GPUs the idle rule judged idle (the telemetry's): its GPU·ms go to the
   * nodes its pods hold GPUs on, split by their shares there. A workload no pod of which runs any
   * more (it ended within the minute) is no node's.
   */
  idle(minute: { workloadId: string; end: number; idleSeconds: number }): void {
    for (const fleet of this.#clusters.values()) {
      const nodes = fleet.allocations.nodesOf(minute.workloadId);
      if (nodes.size === 0) continue;
      const total = [...nodes.values()].reduce((sum, share) => sum + share, 0);
      for (const [node, share] of nodes) fleet.ledger.addIdle(node, minute.end - 1, (minute.idleSeconds * 1000 * share) / total);
      return;
    }
  }

  /** The organization's GPU nodes; the same array while no cluster's nodes moved (what reads them may keep their views). */
  nodes(organizationId: string): readonly FleetNode[] {
    const parts = this.#sortedClusters().map((fleet) => fleet.nodes());
    const kept = this.#byOrganization.get(organizationId);
    if (kept !== undefined && kept.parts.length === parts.length && kept.parts.every((part, i) => part === parts[i])) return kept.nodes;
    const nodes = parts.flat().filter((node) => node.organizationId === organizationId);
    this.#byOrganization.set(organizationId, { parts, nodes });
    return nodes;
  }

  /** Every cluster's GPU nodes, whatever its organization, by cluster then node (the admin port's gauges). */
  allNodes(): FleetNode[] {
    const nodes: FleetNode[] = [];
    for (const fleet of this.#sortedClusters()) nodes.push(...fleet.nodes());
    return nodes;
  }

  #sortedClusters(): ClusterFleet[] {
    return [...this.#clusters].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, fleet]) => fleet);
  }
}
