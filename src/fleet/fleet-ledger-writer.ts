// Adds each cluster's closed buckets of GPU time to the fleet's history, from the replica that holds
// the cluster's write lock (src/ha/), through the same session as its workloads: on PostgreSQL the
// fenced connection, so a writer that lost the lock writes nothing. The store keeps a mark per
// cluster (up to when its history is written); each write starts at the mark and moves it, refused
// if another writer moved it first, so a takeover neither counts a bucket twice nor skips one that
// this replica holds. Buckets older than the mark that no replica holds any more (every replica was
// down) stay a gap, logged.
//
// Every replica, writer or standby, advances its ledgers and forgets buckets older than `keepMs`.
import { HOUR_MS, type FleetHourRow } from '../domain/fleet-ledger.js';
import type { Clock } from '../domain/clock.js';
import type { IndexWriter } from '../store/ports.js';
import type { ClusterLedger } from './fleet-inventory.js';
import type { LedgerHour } from './node-ledger.js';

/** The buckets' hours with the idle time added to them, each node and hour once. */
function withIdle(buckets: readonly LedgerHour[], idle: readonly LedgerHour[]): LedgerHour[] {
  const byKey = new Map(buckets.map((row) => [`${row.hour}\u0000${row.node}`, { ...row }]));
  for (const row of idle) {
    const key = `${row.hour}\u0000${row.node}`;
    const found = byKey.get(key);
    if (found === undefined) byKey.set(key, { ...row });
    else found.idleMs += row.idleMs;
  }
  return [...byKey.values()];
}

type LedgerSink = Pick<IndexWriter, 'fleetLedgerMark' | 'writeFleetLedger'>;

export interface FleetLedgerWriterOptions {
  clock: Clock;
  /** How long a replica keeps the buckets its cluster's writer may not have written yet. Default one hour. */
  keepMs?: number;
  logger: {
    info(obj: object, msg?: string): void;
    warn(obj: object, msg?: string): void;
  };
}

interface Session {
  sink: LedgerSink;
  /** The mark as last read or written; undefined: to be read. */
  mark: number | null | undefined;
}

export class FleetLedgerWriters {
  readonly #ledgers: () => ClusterLedger[];
  readonly #options: FleetLedgerWriterOptions;
  readonly #sessions = new Map<string, Session>();

  constructor(ledgers: () => ClusterLedger[], options: FleetLedgerWriterOptions) {
    this.#ledgers = ledgers;
    this.#options = options;
  }

  becomeWriter(clusterId: string, sink: LedgerSink): void {
    this.#sessions.set(clusterId, { sink, mark: undefined });
  }

  standby(clusterId: string): void {
    this.#sessions.delete(clusterId);
  }

  /** One pass over every cluster: buckets up to now, the closed ones written where this replica writes. */
  async flushAll(): Promise<void> {
    for (const cluster of this.#ledgers()) {
      try {
        await this.flush(cluster);
      } catch (error) {
        const moved = (error as { code?: unknown }).code === 'FLEET_MARK_MOVED';
        const session = this.#sessions.get(cluster.clusterId);
        if (session !== undefined) session.mark = undefined;
        const log = moved ? this.#options.logger.info : this.#options.logger.warn;
        log.call(this.#options.logger, { cluster: cluster.clusterId, err: error },
          moved ? 'The fleet history was written by another writer: reading its mark again' : 'Could not write the fleet history');
      }
    }
  }

  async flush({ clusterId, organizationId, ledger }: ClusterLedger): Promise<number> {
    const now = this.#options.clock.now();
    ledger.advance(now);
    const closed = Math.floor(now / ledger.bucketMs) * ledger.bucketMs;
    let written = 0;
    const session = this.#sessions.get(clusterId);
    const held = ledger.recordFrom;
    if (session !== undefined && held !== null) {
      session.mark ??= await session.sink.fleetLedgerMark(clusterId);
      const expected = session.mark;
      const from = expected === null ? held : Math.max(expected, held);
      const idle = ledger.takeIdle();
      if (from < closed && expected !== null && expected < held) {
        this.#options.logger.warn(
          { cluster: clusterId, from: new Date(expected).toISOString(), to: new Date(held).toISOString() },
          'The fleet history has a gap no replica held the GPU time of (every replica was down, or none watched the cluster)',
        );
      }
      if (from < closed || idle.length > 0) {
        // Idle time is judged after its minute: it is added to its hour whatever the mark.
        const to = from < closed ? closed : (expected ?? closed);
        const buckets = from < closed ? ledger.hours(from, closed) : [];
        const hours: FleetHourRow[] = withIdle(buckets, idle).map((hour) => ({ ...hour, organizationId }));
        try {
          written = await session.sink.writeFleetLedger({ clusterId, expectedMark: expected, to, hours });
        } catch (error) {
          ledger.putBackIdle(idle);
          throw error;
        }
        if (this.#sessions.get(clusterId) === session) session.mark = to;
      }
    }
    ledger.forget(Math.floor((closed - (this.#options.keepMs ?? HOUR_MS)) / ledger.bucketMs) * ledger.bucketMs);
    return written;
  }
}
