// What the service gets of the index, whichever backend holds it (backend.ts chooses): the read side
// (query/'s WorkloadIndex), the write locks of the clusters, retention, and where GPU telemetry is
// kept: lifetime totals in SQLite beside the process's rings, or summaries every replica shares in
// PostgreSQL. Types only: each driver's opener (sqlite/open-sqlite.ts, postgres/open-postgres.ts)
// builds one.
import type { Clock } from '../domain/clock.js';
import type { GpuSummaryStore, LifetimeRepository } from '../domain/telemetry.js';
import type { WorkloadIndex } from '../query/ports.js';
import type { FinishedWorkloadPurger, SeedWriter } from './ports.js';
import type { PostgresLeases } from './postgres/lease.js';
import type { SessionWrites } from './postgres/writers.js';
import type { SqliteLeases } from './sqlite/lease.js';
import type { ReadPool } from './sqlite/threads/read-pool.js';

export type BackendLocation =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; readUrl: string | undefined };

export interface BackendOptions {
  instanceId: string;
  clock: Clock;
  /** SQLite: read worker threads (0: reads on the main thread). */
  readWorkers: number;
  /** SQLite: writes on a worker thread of their own (false: on the main thread). Default true. */
  writeWorker?: boolean;
  /** SQLite: scheduling niceness of the write worker and the checkpointer (default 0). */
  backgroundNiceness?: number;
  /** PostgreSQL: connections of the read pool. */
  poolSize: number;
  /** PostgreSQL: named statements on generic plans for lists and lookups by id (default true). */
  preparedStatements?: boolean;
  leaseSeconds: number;
  /**
   * Days a finished workload stays before the service's retention deletes it (retention_days), which
   * the read side answers as the index's (WorkloadIndex.retentionDays); absent: none deletes them.
   */
  retentionDays?: number;
  logger: {
    info(obj: object, msg?: string): void;
    warn(obj: object, msg?: string): void;
    error(obj: object, msg?: string): void;
    child(bindings: object): BackendOptions['logger'];
  };
  /** Registers a gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
}

export type TelemetryStorage = { kind: 'local'; lifetimes: LifetimeRepository } | { kind: 'shared'; summaries: GpuSummaryStore };

export interface IndexBackend {
  kind: 'sqlite' | 'postgres';
  /** Writes run on a thread of their own (SQLite's write worker): a write step never holds the event loop. */
  writesOnWorker: boolean;
  index: WorkloadIndex;
  /** SQLite: the read workers behind `index`, when reads run on them; null otherwise. */
  readPool: ReadPool | null;
  leases: SqliteLeases | PostgresLeases<SessionWrites>;
  purger: FinishedWorkloadPurger;
  /**
   * Where GPU telemetry is kept: SQLite holds this process's lifetime totals ('local'); PostgreSQL
   * holds summaries every replica shares ('shared').
   */
  telemetry: TelemetryStorage;
  /** Writes outside any cluster's election: for tests and benchmarks that seed the index directly. */
  seed: SeedWriter;
  close(): Promise<void>;
}

