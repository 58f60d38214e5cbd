// The executor of an SQLite connection (src/store/sql/executor.ts): its prepared statements, and one
// piece of work at a time. better-sqlite3 is synchronous, but the store's reads and writes are
// written once for both engines, with awaits between their statements; on a connection that both
// reads and writes (the main thread's without a write worker) another read could otherwise run its
// statements inside a write transaction that is half done, or a second write begin inside the
// first. So each read, snapshot and transaction waits for the one before it to end. In a worker,
// which runs one call at a time, nothing ever waits.
import type { Statement } from 'better-sqlite3';
import type { SqlParams } from '../sql/dialect.js';
import type { ReadExecutor, SqlQuery, SqlReader } from '../sql/executor.js';
import type { StatementCache } from './statement-cache.js';

/** A statement's parameters as better-sqlite3 takes them: none at all when there are none. */
function bound(statement: Statement, params: SqlParams, method: 'all' | 'get' | 'run'): unknown {
  return Object.keys(params).length === 0 ? statement[method]() : statement[method](params);
}

/** Reads on the connection as they come, for work that already holds it. */
export class SqliteReader implements SqlReader {
  constructor(readonly statements: StatementCache) {}

  async all<Row extends object>(query: SqlQuery): Promise<Row[]> {
    return bound(this.statements.get(query.sql), query.params, 'all') as Row[];
  }

  async get<Row extends object>(query: SqlQuery): Promise<Row | undefined> {
    return bound(this.statements.get(query.sql), query.params, 'get') as Row | undefined;
  }

  async allEach<Row extends object>(sql: string, paramSets: readonly SqlParams[]): Promise<Row[]> {
    const statement = this.statements.get(sql);
    const rows: Row[] = [];
    for (const params of paramSets) rows.push(...(statement.all(params) as Row[]));
    return rows;
  }
}

export class SqliteExecutor implements ReadExecutor {
  readonly reader: SqliteReader;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(statements: StatementCache) {
    this.reader = new SqliteReader(statements);
  }

  all<Row extends object>(query: SqlQuery): Promise<Row[]> {
    return this.exclusive(() => this.reader.all<Row>(query));
  }

  get<Row extends object>(query: SqlQuery): Promise<Row | undefined> {
    return this.exclusive(() => this.reader.get<Row>(query));
  }

  allEach<Row extends object>(sql: string, paramSets: readonly SqlParams[]): Promise<Row[]> {
    return this.exclusive(() => this.reader.allEach<Row>(sql, paramSets));
  }

  /** One connection, one piece of work at a time: reads between them see only committed writes. */
  snapshot<T>(work: (reader: SqlReader) => Promise<T>): Promise<T> {
    return this.exclusive(() => work(this.reader));
  }

  /** Runs `work` once the work before it has ended. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
