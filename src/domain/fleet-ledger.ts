// The fleet's history (docs/fleet.md, "History"): per node and clock hour, the GPU-milliseconds
// (whole-GPU equivalents × ms) its GPUs spent in each state, kept by the cluster's writer. Hours are
// summed into as buckets (a minute by default) close, so a row of the current hour grows until the hour ends.
import type { CapacityType } from './capacity-type.js';
import { DAY_MS } from './trend-interval.js';

export { DAY_MS, HOUR_MS } from './trend-interval.js';

/** One node's GPU time in one clock hour (or, in the daily table, one UTC day). */
export interface FleetHourRow {
  clusterId: string;
  node: string;
  /** Start of the hour, epoch ms. */
  hour: number;
  organizationId: string;
  gpuModel: string | null;
  instanceType: string;
  /** How the node is sold (domain/capacity-type.ts); null when no label says. */
  capacityType: CapacityType | null;
  /** GPU·ms the node had: its physical GPUs, whatever their state. */
  capacityMs: number;
  /** GPU·ms out of service and not allocated (docs/fleet.md, the split). */
  unavailableMs: number;
  /** GPU·ms held by running pods. */
  allocatedMs: number;
  /** GPU·ms allocated and idle by the idle rule. */
  idleMs: number;
}

/**
 * What a cluster's writer adds to the history in one transaction: the hours of [from, to), where
 * `from` is the cluster's mark as the writer read it (or where its own record began, later than the
 * mark). The store refuses the write when the mark is no longer `expectedMark`: another writer moved it.
 */
export interface FleetLedgerWrite {
  clusterId: string;
  expectedMark: number | null;
  /** The new mark: every GPU-ms before it is in the history. A bucket boundary (whole seconds). */
  to: number;
  hours: readonly FleetHourRow[];
}

/** The store's answer to a write whose expected mark was not the stored one. */
export class FleetMarkMoved extends Error {
  readonly code = 'FLEET_MARK_MOVED';

  constructor(clusterId: string, expected: number | null, found: number | null) {
    super(`The fleet history of cluster "${clusterId}" is marked up to ${found ?? 'nothing'}, not ${expected ?? 'nothing'}: ` +
      'another writer added to it');
    this.name = 'FleetMarkMoved';
  }
}


/**
 * The rows of `hours` summed by node and UTC day (`hour` then holds the day's start): what the daily
 * table gains from them. A node's model, instance type and capacity type are those of its latest hour.
 */
export function daysOf(hours: readonly FleetHourRow[]): FleetHourRow[] {
  const days = new Map<string, FleetHourRow>();
  for (const row of [...hours].sort((a, b) => a.hour - b.hour)) {
    const day = Math.floor(row.hour / DAY_MS) * DAY_MS;
    const key = `${row.organizationId}\u0000${day}\u0000${row.clusterId}\u0000${row.node}`;
    const sum = days.get(key);
    if (sum === undefined) {
      days.set(key, { ...row, hour: day });
      continue;
    }
    sum.gpuModel = row.gpuModel;
    sum.instanceType = row.instanceType;
    sum.capacityType = row.capacityType;
    sum.capacityMs += row.capacityMs;
    sum.unavailableMs += row.unavailableMs;
    sum.allocatedMs += row.allocatedMs;
    sum.idleMs += row.idleMs;
  }
  return [...days.values()];
}
