// SQLite's prepared statements, one per SQL text, for the life of a connection.
import type { Database, Statement } from 'better-sqlite3';

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
