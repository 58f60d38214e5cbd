// Running the shared read builders (src/store/common/) on PostgreSQL: their `@name` parameters become
// pg's `$n` (named-params.ts), each with its type written out, and a read of several statements runs
// in one REPEATABLE READ READ ONLY transaction, the snapshot SQLite's read worker gives its reads.
//
// Why every parameter is cast: pg sends values as untyped text, and PostgreSQL infers a parameter's
// type from where it first appears. `@now - 1000` would make @now an integer (and a time in ms would
// not fit), a bare `@sign0` in a UNION has no type at all, and `@now - r.day * 86400000.0::float8`
// would make @now a double for the whole statement, so that `w.submitted_at >= @now`, compared as
// doubles, could no longer use an index. The builders' values are closed: text, whole numbers (times
// in epoch ms, counts, signs, days, limits) and lists of text.
import type pg from 'pg';
import type { SqlParams, SqlValue } from '../common/dialect.js';
import { toPositional } from './named-params.js';

export interface ReadQuery {
  sql: string;
  params: SqlParams;
}

/** What runs a statement: the pool (one statement, any connection) or a client in a transaction. */
export type ReadClient = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The SQL type a value is bound as. */
function sqlType(value: SqlValue | undefined): string | null {
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'bigint' : 'float8';
  if (Array.isArray(value)) return value.every((v) => typeof v === 'number') && value.length > 0 ? 'bigint[]' : 'text[]';
  return null;
}

const CACHE_LIMIT = 2_000;
const typedTexts = new Map<string, string>();

/**
 * `query` as pg's text and values, every `$n` cast to its value's type. The positional text has `$n`
 * only where named-params.ts put it (it refuses SQL that has its own), and the builders write no
 * string literal holding a `$`.
 */
export function toTypedPositional(query: ReadQuery): { text: string; values: unknown[] } {
  const { text, values } = toPositional(query.sql, query.params);
  const types = values.map((value) => sqlType(value as SqlValue));
  const key = `${types.join(',')}\n${text}`;
  let typed = typedTexts.get(key);
  if (typed === undefined) {
    typed = text.replace(/\$(\d+)(?!\d)/g, (match, n: string) => {
      const type = types[Number(n) - 1];
      return type === null || type === undefined ? match : `${match}::${type}`;
    });
    if (typedTexts.size >= CACHE_LIMIT) typedTexts.delete(typedTexts.keys().next().value as string);
    typedTexts.set(key, typed);
  }
  return { text: typed, values };
}

/** The rows of one query. */
export async function readRows<Row extends object>(client: ReadClient, query: ReadQuery): Promise<Row[]> {
  const { text, values } = toTypedPositional(query);
  const result = await client.query(text, values);
  return result.rows as Row[];
}

/**
 * Runs `work` on one connection in a REPEATABLE READ READ ONLY transaction: every statement of it
 * sees the database as of its first one. A connection that cannot even roll back is broken: it is
 * destroyed rather than given back to the pool for the next read.
 */
export async function inSnapshot<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = !(await client.query('ROLLBACK').then(() => true, () => false));
    throw error;
  } finally {
    client.release(broken);
  }
}
