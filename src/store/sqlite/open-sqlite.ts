// The index in one SQLite file (index-backend.ts): the reads on the read workers (or this thread's
// connection), the writes on the write worker (or this connection), the write locks granted at once
// (one pod writes its file), and the lifetime totals of this process's telemetry.
import type { Clock } from '../../domain/clock.js';
import type { LifetimeSave } from '../../domain/telemetry.js';
import type { BackendOptions, IndexBackend } from '../index-backend.js';
import { boundWriter, type SeedWriter } from '../ports.js';
import { withIndexTerms } from '../reads/read-methods.js';
import { CURSOR_KEY_SECRET } from '../sql/service-secrets.js';
import { executorOf, sqliteIndex, sqliteWriter } from './connection-ports.js';
import { openDatabase, type Database } from './database.js';
import { SqliteLeases } from './lease.js';
import { lifetimeSaves, SqliteLifetimeStore } from './lifetime-store.js';
import { AsyncLifetimes } from './async-lifetimes.js';
import { ReadPool } from './threads/read-pool.js';
import { ensureServiceSecret } from './service-secrets.js';
import { listUnfinished } from './unfinished.js';
import { SqliteWriteThread } from './threads/write-thread.js';

export async function openSqlite(path: string, options: BackendOptions): Promise<IndexBackend> {
  // Worker threads each hold their own connection; an in-memory index has no file for them.
  const onFile = path !== ':memory:';
  const readsOnWorkers = options.readWorkers > 0 && onFile;
  const writesOnWorker = (options.writeWorker ?? true) && onFile;
  // With both on workers, this connection only reads the unfinished rows after a relist, the lifetime
  // totals of a workload and the row count of /metrics.
  const db = openDatabase(path, { servesReads: !(readsOnWorkers && writesOnWorker) });
  const closing: (() => Promise<void> | void)[] = [() => void db.close()];
  let cursorKey: Uint8Array;
  try {
    cursorKey = ensureServiceSecret(db, CURSOR_KEY_SECRET);
  } catch (error) {
    db.close();
    throw error;
  }
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
      writes = await SqliteWriteThread.open({
        dbPath: path,
        clock: options.clock,
        niceness: options.backgroundNiceness,
        logger: options.logger.child({ component: 'write-thread' }),
      });
      // Before the readers and the connection: the writes already made are let finish.
      const opened = writes;
      closing.unshift(() => opened.close());
      options.gauge(
        'gpucap_index_write_queue_depth',
        'Index writes sent to the write worker and not committed yet',
        () => opened.status().pending,
      );
      options.gauge(
        'gpucap_index_wal_uncheckpointed_pages',
        'Pages of the index\'s write-ahead log not yet copied into the file at the last checkpoint',
        () => opened.status().uncheckpointedPages,
      );
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  const executor = executorOf(db);
  const statements = executor.reader.statements;
  options.gauge('gpucap_index_workloads', 'Workload rows in the index', () => (statements.get(COUNT_ROWS).get() as { n: number }).n);
  const stored = new SqliteLifetimeStore(db);
  const { writer, saveLifetimes } = writes === undefined ? writesHere(db, stored, options.clock) : writesOn(writes);
  return {
    kind: 'sqlite',
    writesOnWorker: writes !== undefined,
    index: withIndexTerms(pool?.index ?? sqliteIndex(db), { cursorKey, retentionDays: options.retentionDays ?? null }),
    readPool: pool ?? null,
    leases: new SqliteLeases(
      { ...boundWriter(writer), listUnfinished: (clusterId) => listUnfinished(statements, clusterId) },
      options.instanceId,
    ),
    purger: writer,
    telemetry: {
      kind: 'local',
      lifetimes: new AsyncLifetimes({ stored, writes: { saveLifetimes }, logger: options.logger.child({ component: 'lifetimes' }) }),
    },
    seed: writer,
    close: closeAll,
  };
}

const COUNT_ROWS = 'SELECT COUNT(*) AS n FROM workloads';

interface SqliteWrites {
  writer: SeedWriter;
  saveLifetimes(entries: readonly LifetimeSave[]): Promise<void>;
}

/** Without a write worker, the writes and the lifetime saves run on this thread's connection. */
function writesHere(db: Database, stored: SqliteLifetimeStore, clock: Clock): SqliteWrites {
  const writer = sqliteWriter(db, { clock });
  return { writer, saveLifetimes: lifetimeSaves(stored, { executor: executorOf(db), writer }) };
}

function writesOn(thread: SqliteWriteThread): SqliteWrites {
  return { writer: thread.writer, saveLifetimes: (entries) => thread.saveLifetimes(entries) };
}

