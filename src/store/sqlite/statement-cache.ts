// SQLite's prepared statements, and the shared filter builders (src/store/sql/workload-sql.ts)
// bound to the SQLite dialect for the tests that run their SQL.
import type { Database, Statement } from 'better-sqlite3';
import type { WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../sql/dialect.js';
import * as shared from '../sql/workload-sql.js';

export type { SqlWhere } from '../sql/workload-sql.js';

/** whereOf of the shared builders, in SQLite's SQL. */
export const whereOf = (filter: WorkloadFilter, alias: 'w' | 'c' | 't' = 'w'): shared.SqlWhere => shared.whereOf(SQLITE, filter, alias);

/** rawGpuSecondsSql of the shared builders, in SQLite's SQL. */
export const rawGpuSecondsSql = (now: string): string => shared.rawGpuSecondsSql(SQLITE, now);

/**
 * Prepared statements by SQL text. Unbounded on purpose: the texts come from a closed set of filter
 * shapes (a few hundred at most), so every entry is reused.
 */
export class StatementCache {
  readonly #statements = new Map<string, Statement>();

  constructor(readonly db: Database) {}

  get(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
