// The read port on one SQLite connection: the store's one read implementation over the connection's
// executor, with the connection's own aggregate that queue percentiles read.
import { SQLITE } from '../common/dialect.js';
import { SqlWorkloadIndex } from '../reads/workload-index.js';
import type { Database } from './database.js';
import { SqliteExecutor } from './executor.js';
import { registerSortedWaits } from './sorted-waits.js';
import { StatementCache } from './workload-sql.js';

export function sqliteIndex(db: Database, statements = new StatementCache(db)): SqlWorkloadIndex {
  registerSortedWaits(db);
  return new SqlWorkloadIndex(new SqliteExecutor(statements), SQLITE);
}
