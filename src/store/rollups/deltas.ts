// The change a write makes to the rollups, from the rollup columns of the rows it may touch, read in
// its transaction before and after it: Σ figures(after) − Σ figures(before), per rollup and key. The
// writer applies it with one statement per rollup (SQLite: json_each, PostgreSQL: unnest) that adds
// each row's values to the stored ones. Because the deltas come from the stored rows, a retried or
// replayed write finds before = after and adds nothing.
import { ROLLUP_VALUE_COLUMNS, ROLLUPS, type RollupDefinition, type RollupSource, type RollupTable } from './definitions.js';
import { anchorDayOf, dayOf, figures, rollupKey, type RollupKey } from './figures.js';

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

/** Orders keys column by column: numbers by value, strings by UTF-16 code units */
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

/** A string per key, to sum the rows of a key: each text prefixed by its length, so that none runs into the next. */
function keyId(rollup: RollupDefinition, row: RollupSource, day: number): string {
  let id = '';
  for (const column of rollup.keys) {
    const value = column === 'day' ? day : row[column];
    id += typeof value === 'string' ? `${value.length}:${value}` : `${value};`;
  }
  return id;
}

interface Sum {
  readonly key: RollupKey;
  readonly values: number[];
}

/** Per rollup: where each of its value columns is in the figures list (ROLLUP_VALUE_COLUMNS order). */
const VALUE_INDEXES = ROLLUPS.map((rollup) => rollup.values.map((column) => ROLLUP_VALUE_COLUMNS.indexOf(column)));

/** figures(row, day) in ROLLUP_VALUE_COLUMNS order. */
function figureList(row: RollupSource, day: number): number[] {
  const f = figures(row, day);
  return [
    f.n, f.workloads, f.completed, f.failed, f.started, f.open_started, f.duration_base_ms, f.open_gpus, f.open_gpu_days, f.gpu_base_ms,
    f.waiting, f.queue_base_ms, f.waiting_days,
  ];
}

/**
 * The deltas of a write whose touched rows were `before` and became `after` (a row only in `after`
 * was inserted, one only in `before` was deleted). Tables with nothing to add are left out; the
 * others come in ROLLUPS order.
 */
export function rollupDeltas(before: Iterable<RollupSource>, after: Iterable<RollupSource>): RollupDelta[] {
  const sums = ROLLUPS.map(() => new Map<string, Sum>());
  // Loops rather than closures per rollup and value, and a Map per rollup keyed by a plain string:
  // this runs for every row of every write.
  const add = (row: RollupSource, sign: 1 | -1): void => {
    const day = dayOf(row.submitted_at);
    const daily = figureList(row, day);
    // Weekly rollups base the figures at the week's Monday.
    let weekly: number[] | undefined;
    for (let r = 0; r < ROLLUPS.length; r += 1) {
      const rollup = ROLLUPS[r];
      if (rollup.requires !== undefined && row[rollup.requires] === null) continue;
      const indexes = VALUE_INDEXES[r];
      const anchor = anchorDayOf(rollup, day);
      const figured = anchor === day ? daily : (weekly ??= figureList(row, anchor));
      const id = keyId(rollup, row, anchor);
      let entry = sums[r].get(id);
      if (entry === undefined) {
        entry = { key: rollupKey(rollup, row), values: indexes.map(() => 0) };
        sums[r].set(id, entry);
      }
      for (let v = 0; v < indexes.length; v += 1) entry.values[v] += sign * figured[indexes[v]];
    }
  };
  for (const row of before) add(row, -1);
  for (const row of after) add(row, 1);

  const deltas: RollupDelta[] = [];
  ROLLUPS.forEach((rollup, r) => {
    const rows: RollupDeltaRow[] = [];
    for (const { key, values } of sums[r].values()) {
      // −1 × a figure of 0 is −0; `+ 0` makes it 0, so that no driver sends "-0".
      if (values.some((value) => value !== 0)) rows.push({ key, values: values.map((value) => value + 0) });
    }
    rows.sort((a, b) => compareKeys(a.key, b.key));
    if (rows.length > 0) deltas.push({ rollup, table: rollup.table, rows });
  });
  return deltas;
}
