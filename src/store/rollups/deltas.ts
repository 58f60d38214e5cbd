// The change a write makes to the rollups, from the rollup columns of the rows it may touch, read in
// its transaction before and after it: Σ figures(after) − Σ figures(before), per rollup and key. The
// writer applies it with one statement per rollup (SQLite: json_each, PostgreSQL: unnest) that adds
// each row's values to the stored ones. Because the deltas come from the stored rows, a retried or
// replayed write finds before = after and adds nothing.
import { ROLLUPS, type RollupDefinition, type RollupSource, type RollupTable } from './definitions.js';
import { figures, rollupKey, type Figures, type RollupKey } from './figures.js';

/** What to add to one rollup row; the row is created with these values when it does not exist yet. */
export interface RollupDeltaRow {
  /** The key, in the order of the rollup's key columns (RollupDefinition.keys). */
  readonly key: RollupKey;
  /** What to add to each value column, in the order of RollupDefinition.values; never all 0. */
  readonly values: readonly number[];
}

/**
 * The rows to add to one rollup table: each key once (PostgreSQL's ON CONFLICT DO UPDATE cannot
 * affect a row twice in one statement), sorted by key (a fixed order in which to lock rows, so that
 * writers of two clusters sharing an organization's rollup rows cannot deadlock).
 */
export interface RollupDelta {
  readonly rollup: RollupDefinition;
  readonly table: RollupTable;
  readonly rows: readonly RollupDeltaRow[];
}

/** Orders keys column by column: numbers by value, strings by UTF-16 code units. */
export function compareKeys(a: RollupKey, b: RollupKey): number {
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

interface Sum {
  key: RollupKey;
  values: number[];
}

/**
 * The deltas of a write whose touched rows were `before` and became `after` (a row only in `after`
 * was inserted, one only in `before` was deleted). Tables with nothing to add are left out; the
 * others come in ROLLUPS order.
 */
export function rollupDeltas(before: Iterable<RollupSource>, after: Iterable<RollupSource>): RollupDelta[] {
  const sums = ROLLUPS.map(() => new Map<string, Sum>());
  const add = (row: RollupSource, sign: 1 | -1): void => {
    const figured: Figures = figures(row);
    ROLLUPS.forEach((rollup, r) => {
      const key = rollupKey(rollup, row);
      const id = JSON.stringify(key);
      const existing = sums[r].get(id);
      const sum = existing ?? { key, values: rollup.values.map(() => 0) };
      if (existing === undefined) sums[r].set(id, sum);
      rollup.values.forEach((column, v) => {
        sum.values[v] += sign * figured[column];
      });
    });
  };
  for (const row of before) add(row, -1);
  for (const row of after) add(row, 1);

  const deltas: RollupDelta[] = [];
  ROLLUPS.forEach((rollup, r) => {
    const rows = [...sums[r].values()]
      .filter((sum) => sum.values.some((value) => value !== 0))
      // −1 × a figure of 0 is −0; `+ 0` makes it 0, so that no driver sends "-0".
      .map((sum) => ({ key: sum.key, values: sum.values.map((value) => value + 0) }))
      .sort((a, b) => compareKeys(a.key, b.key));
    if (rows.length > 0) deltas.push({ rollup, table: rollup.table, rows });
  });
  return deltas;
}
