// What the indexer writes through: the store's writer port (src/store/ports.ts), of which it needs
// the cluster's writes and the read of what it must reconcile after a relist. A sink without
// writeWorkloads gets upsertWorkloads then upsertPodIntervals (tests count those calls).
import type { ClusterWrites } from '../store/ports.js';

/** Where the indexer writes rows and intervals, and reads what it must reconcile after a relist. */
/** The fleet's history is written beside the indexer (src/fleet/fleet-ledger-writer.ts), not by it. */
export type WorkloadSink = Omit<ClusterWrites, 'writeWorkloads' | 'fleetLedgerMark' | 'writeFleetLedger'> &
  Partial<Pick<ClusterWrites, 'writeWorkloads'>>;

/** The part of a pino logger the indexer uses. */
export interface IndexerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}
