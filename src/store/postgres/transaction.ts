// One transaction on one connection: BEGIN, the work, COMMIT; ROLLBACK when the work throws.
import type pg from 'pg';

/** What the schema code needs of a client: a pg.Client, or a pg.PoolClient checked out of a pool. */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * Runs `work` in a transaction on `client`, which must not be in one already: a nested BEGIN is only a
 * warning in PostgreSQL, and the COMMIT here would then commit the caller's transaction.
 */
export async function inTransaction<T>(client: Queryable, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  let result: T;
  try {
    result = await work();
  } catch (error) {
    // A broken connection cannot roll back, and the server does so itself when the session ends;
    // the error that matters is the one the work threw.
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  await client.query('COMMIT');
  return result;
}
