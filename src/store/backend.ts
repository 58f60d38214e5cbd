// The index's backend, chosen once from its location (config db_url / db_path): SQLite in one pod's
// file, or a PostgreSQL database that many replicas and many clusters' releases share. Either way the
// service gets the same parts: the read side (query/'s WorkloadIndex), the write locks of the
// clusters, retention, and where GPU telemetry is kept: lifetime totals in SQLite beside the process's
// rings, or summaries every replica shares in PostgreSQL. This is the only module that knows both backends.
import type { GpuSummaryStore, LifetimeRepository } from '../domain/telemetry.js';
import type { PodGpuInterval, WorkloadRecord } from '../domain/workload.js';
import type { WorkloadIndex } from '../query/ports.js';
import { connectMaintenance, createReadPool } from './postgres/connection.js';
import { PostgresGpuSummaries } from './postgres/gpu-summaries.js';
import { PostgresLeases } from './postgres/lease.js';
import { migrate as migratePostgres } from './postgres/migrate.js';
import { PostgresRetention } from './postgres/retention.js';
import { postgresIndex } from './postgres/read-index.js';
import { PostgresWorkloadWriter } from './postgres/workload-writer.js';
import { openDatabase } from './sqlite/database.js';
import { SqliteLeases } from './sqlite/lease.js';
import { SqliteLifetimeStore } from './sqlite/lifetime-store.js';
import { LifetimesOnWriteThread } from './sqlite/lifetimes-on-write-thread.js';
import { ReadPool } from './sqlite/read-pool.js';
import { sqliteIndex } from './sqlite/read-index.js';
import { SqliteWorkloadStore } from './sqlite/workload-store.js';
import { SqliteWriteThread } from './sqlite/write-thread.js';

export type BackendLocation =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; readUrl: string | undefined };

export interface BackendOptions {
  instanceId: string;
  clock: { now(): number };
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
  logger: {
    info(obj: object, msg?: string): void;
    warn(obj: object, msg?: string): void;
    error(obj: object, msg?: string): void;
    child(bindings: object): BackendOptions['logger'];
  };
  /** Registers a gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
}

/** Writes without a cluster's lock: tests and benchmarks seed an index with them. */
export interface SeedWriter {
  upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number>;
  upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number>;
  closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number>;
  deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number>;
}

export type TelemetryStorage = { kind: 'local'; lifetimes: LifetimeRepository } | { kind: 'shared'; summaries: GpuSummaryStore };

export interface IndexBackend {
  kind: 'sqlite' | 'postgres';
  /** Writes run on a thread of their own (SQLite's write worker): a write step never holds the event loop. */
  writesOnWorker: boolean;
  index: WorkloadIndex;
  /** SQLite: the read workers behind `index`, when reads run on them; null otherwise. */
  readPool: ReadPool | null;
  leases: SqliteLeases | PostgresLeases<PostgresWorkloadWriter>;
  purger: { deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number> };
  /**
   * Where GPU telemetry is kept: SQLite holds this process's lifetime totals ('local'); PostgreSQL
   * holds summaries every replica shares ('shared').
   */
  telemetry: TelemetryStorage;
  /** Writes outside any cluster's election: for tests and benchmarks that seed the index directly. */
  seed: SeedWriter;
  close(): Promise<void>;
}

export async function openBackend(location: BackendLocation, options: BackendOptions): Promise<IndexBackend> {
  return location.kind === 'sqlite' ? openSqlite(location.path, options) : openPostgres(location, options);
}

async function openSqlite(path: string, options: BackendOptions): Promise<IndexBackend> {
  // Worker threads each hold their own connection; an in-memory index has no file for them.
  const onFile = path !== ':memory:';
  const readsOnWorkers = options.readWorkers > 0 && onFile;
  const writesOnWorker = (options.writeWorker ?? true) && onFile;
  // With both on workers, this connection only reads the unfinished rows after a relist, the lifetime
  // totals of a workload and the row count of /metrics.
  const db = openDatabase(path, { servesReads: !(readsOnWorkers && writesOnWorker) });
  const store = new SqliteWorkloadStore(db, { clock: options.clock });
  const closing: (() => Promise<void> | void)[] = [() => void db.close()];
  const closeAll = async () => {
    for (const close of closing) await close();
  };
  let pool: ReadPool | undefined;
  let writes: SqliteWriteThread | undefined;
  try {
    if (readsOnWorkers) {
      pool = await ReadPool.open({ dbPath: path, size: options.readWorkers, logger: options.logger.child({ component: 'read-pool' }) });
      const opened = pool;
      closing.unshift(() => opened.close());
      options.gauge('gpucap_read_pool_queue_depth', 'Index reads waiting for a read worker', () => opened.status().queued);
      options.gauge('gpucap_read_pool_busy_workers', 'Read workers running an index read', () => opened.status().busy);
    }
    if (writesOnWorker) {
      writes = await SqliteWriteThread.open({ dbPath: path, clock: options.clock, niceness: options.backgroundNiceness, logger: options.logger.child({ component: 'write-thread' }) });
      // Before the readers and the connection: the writes already made are let finish.
      const opened = writes;
      closing.unshift(() => opened.close());
      options.gauge('gpucap_index_write_queue_depth', 'Index writes sent to the write worker and not committed yet', () => opened.status().pending);
      options.gauge('gpucap_index_wal_uncheckpointed_pages', 'Pages of the index\'s write-ahead log not yet copied into the file at the last checkpoint', () => opened.status().uncheckpointedPages);
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  options.gauge('gpucap_index_workloads', 'Workload rows in the index', () => store.countRows());
  // Without a write worker, saves run here, with the store's writes on the same connection.
  const lifetimes = new SqliteLifetimeStore(db, { onGpuErrors: (ids) => store.escalateGpuErrors(ids) });
  const writer = writes ?? store;
  return {
    kind: 'sqlite',
    writesOnWorker: writes !== undefined,
    index: pool?.index ?? sqliteIndex(db),
    readPool: pool ?? null,
    leases: new SqliteLeases(
      { ...bindWrites(writer), listUnfinished: (clusterId) => store.listUnfinished(clusterId) },
      options.instanceId,
    ),
    purger: writer,
    telemetry: {
      kind: 'local',
      lifetimes: writes === undefined ? lifetimes : new LifetimesOnWriteThread({ stored: lifetimes, writes, logger: options.logger.child({ component: 'lifetimes' }) }),
    },
    seed: writer,
    close: closeAll,
  };
}

/** The writes of `writer`, bound, for the lease sessions. */
function bindWrites(writer: SqliteWriteThread | SqliteWorkloadStore) {
  return {
    upsertWorkloads: (records: readonly WorkloadRecord[]) => writer.upsertWorkloads(records),
    upsertPodIntervals: (intervals: readonly PodGpuInterval[]) => writer.upsertPodIntervals(intervals),
    writeWorkloads: (records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]) => writer.writeWorkloads(records, intervals),
    closeOpenIntervals: (workloadIds: readonly string[], at: number) => writer.closeOpenIntervals(workloadIds, at),
  };
}

async function openPostgres(location: { url: string; readUrl: string | undefined }, options: BackendOptions): Promise<IndexBackend> {
  const logger = options.logger.child({ component: 'postgres' });
  // Replicas starting together migrate one after the other, under the schema lock.
  const maintenance = await connectMaintenance(location.url, { instanceId: options.instanceId, logger });
  try {
    await migratePostgres(maintenance, { now: options.clock.now() });
  } finally {
    await maintenance.end().catch(() => undefined);
  }
  const primary = createReadPool(location.url, { instanceId: options.instanceId, logger, size: options.poolSize });
  const readers = location.readUrl === undefined ? primary : createReadPool(location.readUrl, { instanceId: options.instanceId, logger, size: options.poolSize });
  const leases = new PostgresLeases(
    { url: location.url, instanceId: options.instanceId, leaseSeconds: options.leaseSeconds, logger, read: (sql, params) => primary.query(sql, params) },
    (connection) => new PostgresWorkloadWriter(connection, { clock: options.clock }).load(),
  );
  options.gauge('gpucap_index_workloads', 'Workload rows in the index', async () => {
    const { rows } = await readers.query<{ n: number }>('SELECT COALESCE(SUM(workloads), 0)::bigint AS n FROM workload_totals');
    return rows[0]?.n ?? 0;
  });
  options.gauge('gpucap_db_pool_total', 'Connections of the read pool', () => readers.totalCount);
  options.gauge('gpucap_db_pool_idle', 'Idle connections of the read pool', () => readers.idleCount);
  options.gauge('gpucap_db_pool_waiting', 'Reads waiting for a connection of the read pool', () => readers.waitingCount);
  const seed = new SeedSession(leases, new PostgresRetention(primary));
  return {
    kind: 'postgres',
    writesOnWorker: false,
    index: postgresIndex(readers, { preparedStatements: options.preparedStatements ?? true }),
    readPool: null,
    leases,
    purger: new PostgresRetention(primary),
    telemetry: { kind: 'shared', summaries: new PostgresGpuSummaries({ primary, readers, clock: options.clock }) },
    seed,
    close: async () => {
      await seed.close();
      if (readers !== primary) await readers.end();
      await primary.end();
    },
  };
}

/**
 * Seeding on PostgreSQL goes through a writer session of its own (cluster SEED_CLUSTER), taken on the
 * first write: the rows may name any cluster, the write rules and rollup deltas are the real ones.
 * Nothing in the service seeds; only tests and benchmarks do.
 */
const SEED_CLUSTER = 'gpucap-seed';

class SeedSession implements SeedWriter {
  readonly #leases: PostgresLeases<PostgresWorkloadWriter>;
  readonly #retention: PostgresRetention;
  #session: ReturnType<ReturnType<PostgresLeases<PostgresWorkloadWriter>['lease']>['acquire']> | undefined;

  constructor(leases: PostgresLeases<PostgresWorkloadWriter>, retention: PostgresRetention) {
    this.#leases = leases;
    this.#retention = retention;
  }

  async upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number> {
    return (await this.#writer()).upsertWorkloads(records);
  }

  async upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number> {
    return (await this.#writer()).upsertPodIntervals(intervals);
  }

  async closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number> {
    return (await this.#writer()).closeOpenIntervals(workloadIds, at);
  }

  deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number> {
    return this.#retention.deleteFinishedBatch(cutoffMs, limit);
  }

  async close(): Promise<void> {
    const session = await this.#session?.catch(() => null);
    await session?.release().catch(() => undefined);
  }

  async #writer() {
    this.#session ??= this.#leases.lease(SEED_CLUSTER).acquire();
    const session = await this.#session;
    if (session === null) throw new Error(`Cannot seed the index: another process holds the write lock of "${SEED_CLUSTER}"`);
    return session;
  }
}
