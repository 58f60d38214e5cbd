// Adds rollup deltas (src/store/rollups/deltas.ts) to PostgreSQL's rollup tables: one statement per
// table, the rows as arrays through unnest, each key's values added to the stored row or inserting
// it. The rows come sorted by key, so every writer locks rollup rows in the same order.
import type pg from 'pg';
import { ROLLUP_COLUMN_TYPES } from '../rollups/definitions.js';
import type { RollupDelta } from '../rollups/deltas.js';

const SQL_TYPE = { text: 'text', integer: 'bigint', real: 'float8' } as const;

/** One statement per rollup table: each key's values added to the stored row, created when missing. */
export async function applyRollupDeltas(client: pg.ClientBase, deltas: readonly RollupDelta[]): Promise<void> {
  for (const delta of deltas) {
    const { keys, values } = delta.rollup;
    const columns = [...keys, ...values];
    const arrays = columns.map((column, i) =>
      `$${i + 1}::${column === 'is_managed' ? 'smallint' : SQL_TYPE[ROLLUP_COLUMN_TYPES[column]]}[]`,
    );
    const params = [
      ...keys.map((_, k) => delta.rows.map((row) => row.key[k])),
      ...values.map((_, v) => delta.rows.map((row) => row.values[v])),
    ];
    await client.query(
      `INSERT INTO ${delta.table} AS t (${columns.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})
       ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${values.map((v) => `${v} = t.${v} + excluded.${v}`).join(', ')}`,
      params,
    );
  }
}
