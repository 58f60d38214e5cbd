// Running the store's shared read builders on PostgreSQL: their `@name` parameters become
// pg's `$n` (named-params.ts), each with its type written out, and a read of several statements runs
// in one REPEATABLE READ READ ONLY transaction, the snapshot SQLite's read worker gives its reads.
// The reads that gain from it run as named statements on generic plans (prepared-statements.ts).
//
// Why every parameter is cast: pg sends values as untyped text, and PostgreSQL infers a parameter's
// type from where it first appears. `@now - 1000` would make @now an integer (and a time in ms would
// not fit), a bare `@sign0` in a UNION has no type at all, and `@now - r.day * 86400000.0::float8`
// would make @now a double for the whole statement, so that `w.submitted_at >= @now`, compared as
// doubles, could no longer use an index. The builders' values are closed: text, whole numbers (times
// in epoch ms, counts, signs, days, limits) and lists of text.
import type pg from 'pg';
import type { SqlParams, SqlValue } from '../sql/dialect.js';
import { toPositional } from './named-params.js';
import { isStaleStatement, type PreparedStatements } from './prepared-statements.js';

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

/**
 * The rows of one query: a named statement when `prepared` is given (prepared on the connection at its
 * first use there), else an unnamed one, planned for its values at every call.
 */
export async function readRows<Row extends object>(
  client: ReadClient,
  query: ReadQuery,
  prepared: PreparedStatements | null = null,
): Promise<Row[]> {
  const { text, values } = toTypedPositional(query);
  const result = await client.query(prepared === null ? { text, values } : { name: prepared.nameOf(text), text, values });
  return result.rows as Row[];
}

const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
// plan_cache_mode = auto compares the generic plan's estimate with the custom plans': where the
// generic one is estimated worse (an unnested array of unknown length), it would plan afresh forever.
// SET LOCAL ends with the transaction, and travels in BEGIN's message: no round trip of its own.
const BEGIN_GENERIC = `${BEGIN_SNAPSHOT}; SET LOCAL plan_cache_mode = force_generic_plan`;

/**
 * Runs `work` on one connection in a REPEATABLE READ READ ONLY transaction: every statement of it
 * sees the database as of its first one. With `genericPlans`, its named statements run on their
 * generic plans (and so would unnamed ones: give it only work whose every statement gains from them).
 * A connection that cannot even roll back is broken, and one whose prepared statements went stale
 * holds them under names no longer used: either is destroyed rather than given back to the pool.
 */
export async function inSnapshot<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { genericPlans?: boolean } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(options.genericPlans === true ? BEGIN_GENERIC : BEGIN_SNAPSHOT);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = !(await client.query('ROLLBACK').then(() => true, () => false)) || isStaleStatement(error);
    throw error;
  } finally {
    client.release(broken);
  }
}
