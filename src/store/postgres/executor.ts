// The read executor of PostgreSQL (src/store/sql/executor.ts) over the read pool: a read is one
// statement on any connection, a snapshot one REPEATABLE READ READ ONLY transaction on one
// (read-queries.ts). Reads whose plan may be reused run as named statements (prepared-statements.ts),
// which plan_cache_mode = auto runs on their generic plans from the sixth call; every other read stays
// unnamed, planned for its values at each call. Measured on the 1M-row bench index: statistics and
// the capacity reads ran 7x (44 vs 6.5 ms) and 130x slower on generic plans, and a dated list's count
// 1.4-6x, so only lists without dates and lookups by id are named (the dialect's reusableListPlan).
//
// A database that cannot answer now (a restart, a failover, a full pool) fails the read with
// IndexBusyError, which the API answers 503 with Retry-After; any other error stays what it is (a
// 500). A read whose prepared statements went stale (a migration changed what they return) runs once
// more, under new names.
import type pg from 'pg';
import type { SqlParams } from '../sql/dialect.js';
import type { PlanHints, ReadExecutor, SqlQuery, SqlReader } from '../sql/executor.js';
import { asIndexBusy } from './errors.js';
import { PreparedStatements } from './prepared-statements.js';
import { inSnapshot, readRows, type ReadClient } from './read-queries.js';

export interface PostgresReadOptions {
  /**
   * Named statements on generic plans for the reads that gain from them (config
   * db_prepared_statements; default true). Off behind a pooler that cannot carry named statements.
   */
  preparedStatements?: boolean;
}

/** Reads on one client (the pool, or a connection in a snapshot). */
export class ClientReader implements SqlReader {
  constructor(
    readonly client: ReadClient,
    readonly prepared: PreparedStatements | null,
  ) {}

  all<Row extends object>(query: SqlQuery, hints?: PlanHints): Promise<Row[]> {
    return readRows<Row>(this.client, query, hints?.reusable === true ? this.prepared : null);
  }

  async get<Row extends object>(query: SqlQuery, hints?: PlanHints): Promise<Row | undefined> {
    return (await this.all<Row>(query, hints))[0];
  }

  async allEach<Row extends object>(sql: string, paramSets: readonly SqlParams[]): Promise<Row[]> {
    const rows: Row[] = [];
    for (const params of paramSets) rows.push(...(await this.all<Row>({ sql, params })));
    return rows;
  }
}

export class PostgresReadExecutor implements ReadExecutor {
  readonly #pool: pg.Pool;
  readonly #prepared: PreparedStatements | null;
  readonly #reader: ClientReader;

  constructor(pool: pg.Pool, options: PostgresReadOptions = {}) {
    this.#pool = pool;
    this.#prepared = options.preparedStatements === false ? null : new PreparedStatements();
    this.#reader = new ClientReader(pool, this.#prepared);
  }

  all<Row extends object>(query: SqlQuery, hints?: PlanHints): Promise<Row[]> {
    return this.#read(() => this.#reader.all<Row>(query, hints));
  }

  get<Row extends object>(query: SqlQuery, hints?: PlanHints): Promise<Row | undefined> {
    return this.#read(() => this.#reader.get<Row>(query, hints));
  }

  allEach<Row extends object>(sql: string, paramSets: readonly SqlParams[]): Promise<Row[]> {
    return this.#read(() => this.#reader.allEach<Row>(sql, paramSets));
  }

  snapshot<T>(work: (reader: SqlReader) => Promise<T>, options: { genericPlans?: boolean } = {}): Promise<T> {
    return this.#read(() => inSnapshot(this.#pool, (client) => work(new ClientReader(client, this.#prepared)), options));
  }

  /** `read`, an unavailable database's error turned into IndexBusyError, and run again once under new names after stale statements. */
  async #read<T>(read: () => Promise<T>): Promise<T> {
    const generation = this.#prepared?.generation ?? 0;
    try {
      return await read();
    } catch (error) {
      if (this.#prepared === null || !this.#prepared.renewAfter(error, generation)) throw asIndexBusy(error);
    }
    try {
      return await read();
    } catch (error) {
      throw asIndexBusy(error);
    }
  }
}
