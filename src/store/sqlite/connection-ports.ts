// The read and write ports on one SQLite connection: the store's one read implementation and its one
// writer, over the connection's executor. A connection has one executor, which both share: a read
// then never runs inside a write transaction of the same connection (executor.ts).
import type { Clock } from '../../domain/clock.js';
import { SQLITE } from '../sql/dialect.js';
import { SqlWorkloadIndex } from '../reads/workload-index.js';
import { WorkloadWriter, type WorkloadWriterOptions } from '../writes/workload-writer.js';
import type { Database } from './database.js';
import { SqliteExecutor } from './executor.js';
import { registerSortedWaits } from './sorted-waits.js';
import { SqliteWriteDriver } from './write-driver.js';
import { StatementCache } from './statement-cache.js';

const executors = new WeakMap<Database, SqliteExecutor>();

/** The connection's executor, made on first use. */
export function executorOf(db: Database): SqliteExecutor {
  let executor = executors.get(db);
  if (executor === undefined) {
    executor = new SqliteExecutor(new StatementCache(db));
    executors.set(db, executor);
  }
  return executor;
}

/**
 * The read port on the connection, with the connection's own aggregate that queue percentiles read.
 * `statements`: an executor of its own over these (tests record what a read prepares and runs).
 */
export function sqliteIndex(db: Database, statements?: StatementCache): SqlWorkloadIndex {
  registerSortedWaits(db);
  return new SqlWorkloadIndex(statements === undefined ? executorOf(db) : new SqliteExecutor(statements), SQLITE);
}

/** The writer on the connection; `clock` stamps updated_at. */
export function sqliteWriter(db: Database, options: { clock: Clock } & Pick<WorkloadWriterOptions, 'onCommit'>): WorkloadWriter {
  return new WorkloadWriter(new SqliteWriteDriver(db, executorOf(db)), options);
}
