// What runs the store's SQL. The reads and writes of the index are written once, over this and the
// dialect (dialect.ts); each backend is a driver of it: SQLite's connection, on this thread or a
// worker's (src/store/sqlite/executor.ts), and PostgreSQL's pools and the writer's fenced connection
// (src/store/postgres/executor.ts). A query is SQL text with `@name` parameters; a list travels as one
// parameter (dialect.listValue), so that the text never depends on its length.
import type { SqlParams } from './dialect.js';

export interface SqlQuery {
  sql: string;
  params: SqlParams;
}

/** How a read is best planned: a hint an engine may ignore. */
export interface PlanHints {
  /**
   * One plan made once and reused serves this read as well as a plan for its values would
   * (PostgreSQL then runs it as a named statement on its generic plan).
   */
  reusable?: boolean;
}

export interface SqlReader {
  all<Row extends object>(query: SqlQuery, hints?: PlanHints): Promise<Row[]>;
  get<Row extends object>(query: SqlQuery, hints?: PlanHints): Promise<Row | undefined>;
  /**
   * The rows of one statement run once per parameter set, in order: an in-process engine's seek key
   * by key (the statement is prepared once for them all).
   */
  allEach<Row extends object>(sql: string, paramSets: readonly SqlParams[]): Promise<Row[]>;
}

export interface ReadExecutor extends SqlReader {
  /**
   * Runs the reads of `work` on one snapshot: each of them sees the index as of the first. With
   * `genericPlans`, an engine that plans per call may run them on their generic plans instead (give
   * it only reads that gain from that).
   */
  snapshot<T>(work: (reader: SqlReader) => Promise<T>, options?: { genericPlans?: boolean }): Promise<T>;
}
