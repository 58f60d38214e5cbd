// The index in a PostgreSQL database that many replicas and clusters' releases share
// (index-backend.ts): migrated under the schema lock at start, read through the read pool (or a
// read-only URL's), each cluster written by the holder of its advisory lock, retention and GPU
// telemetry summaries on the primary pool.
import type { BackendOptions, IndexBackend } from '../index-backend.js';
import { forwardingSeedWriter, type SeedWriter } from '../ports.js';
import { withIndexTerms } from '../reads/read-methods.js';
import { CURSOR_KEY_SECRET } from '../sql/service-secrets.js';
import { connectMaintenance, createReadPool } from './connection.js';
import { PostgresGpuSummaries } from './gpu-summaries.js';
import { PostgresLeases } from './lease.js';
import { migrate } from './migrations/migrate.js';
import { postgresIndex } from './read-index.js';
import { ensureServiceSecret } from './service-secrets.js';
import { poolWriter, sessionWriter, type SessionWrites } from './writers.js';

export async function openPostgres(location: { url: string; readUrl: string | undefined }, options: BackendOptions): Promise<IndexBackend> {
  const logger = options.logger.child({ component: 'postgres' });
  // Replicas starting together migrate one after the other, under the schema lock.
  const maintenance = await connectMaintenance(location.url, { instanceId: options.instanceId, logger });
  let cursorKey: Uint8Array;
  try {
    await migrate(maintenance, { now: options.clock.now() });
    // On the primary, as a read replica may not hold the row yet when this replica made it.
    cursorKey = await ensureServiceSecret(maintenance, CURSOR_KEY_SECRET);
  } finally {
    await maintenance.end().catch(() => undefined);
  }
  const pool = { instanceId: options.instanceId, logger, size: options.poolSize };
  const primary = createReadPool(location.url, pool);
  const readers = location.readUrl === undefined ? primary : createReadPool(location.readUrl, pool);
  const leases = new PostgresLeases(
    {
      url: location.url,
      instanceId: options.instanceId,
      leaseSeconds: options.leaseSeconds,
      logger,
      read: (sql, params) => primary.query(sql, params),
    },
    (connection) => sessionWriter(connection, { clock: options.clock }),
  );
  options.gauge('gpucap_index_workloads', 'Workload rows in the index', async () => {
    const { rows } = await readers.query<{ n: number }>('SELECT COALESCE(SUM(workloads), 0)::bigint AS n FROM workload_totals');
    return rows[0]?.n ?? 0;
  });
  options.gauge('gpucap_db_pool_total', 'Connections of the read pool', () => readers.totalCount);
  options.gauge('gpucap_db_pool_idle', 'Idle connections of the read pool', () => readers.idleCount);
  options.gauge('gpucap_db_pool_waiting', 'Reads waiting for a connection of the read pool', () => readers.waitingCount);
  const purger = poolWriter(primary, { clock: options.clock });
  const seed = seedSession(leases, purger);
  return {
    kind: 'postgres',
    writesOnWorker: false,
    index: withIndexTerms(postgresIndex(readers, { preparedStatements: options.preparedStatements ?? true }), {
      cursorKey,
      retentionDays: options.retentionDays ?? null,
    }),
    readPool: null,
    leases,
    purger,
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

/** Writes through the seed cluster's session, taken on the first write; retention through the pool. */
function seedSession(leases: PostgresLeases<SessionWrites>, purger: SeedWriter): SeedWriter & { close(): Promise<void> } {
  let session: ReturnType<ReturnType<typeof leases.lease>['acquire']> | undefined;
  const writer = async () => {
    session ??= leases.lease(SEED_CLUSTER).acquire();
    const held = await session;
    if (held === null) throw new Error(`Cannot seed the index: another process holds the write lock of "${SEED_CLUSTER}"`);
    return held;
  };
  const writes = forwardingSeedWriter(async (method, args) => {
    if (method === 'deleteFinishedBatch') return Reflect.apply(purger.deleteFinishedBatch, purger, args) as Promise<number>;
    const held = await writer();
    return Reflect.apply(held[method], held, args) as Promise<unknown>;
  });
  return Object.assign(writes, {
    close: async () => {
      const held = await session?.catch(() => null);
      await held?.release().catch(() => undefined);
    },
  });
}
