// The rollups (src/store/rollups/) as SQLite's writer keeps them, per transaction, since schema v4
// dropped their triggers: the writer works out what its rows' change adds to each rollup
// (workload-writer.ts), and this adds it, in statements of many rows. Where a row's usage is counted
// moves with the row's keys: its triggers (migrations/v06-usage.ts) move the usage rollup.
import { ROLLUPS, type RollupDefinition, type RollupTable } from '../rollups/definitions.js';
import type { RollupDelta } from '../rollups/deltas.js';
import { DAY_MS } from '../rollups/figures.js';
import type { StatementCache } from './statement-cache.js';


/**
 * Adds `count` rows of [...key, ...values], bound as positional parameters, each to its rollup row,
 * creating it. Bound rather than sent as one JSON array: SQLite reads the i-th element of a JSON
 * array by walking the elements before it, so extracting a row's columns costs the square of their
 * number (the rollups' JSON took 457 ms of a 5.5 s write of 60k rows in an in-process run).
 */
function applyRollupSql(rollup: RollupDefinition, count: number): string {
  const columns = [...rollup.keys, ...rollup.values];
  const row = `(${columns.map(() => '?').join(', ')})`;
  return `INSERT INTO ${rollup.table} (${columns.join(', ')}) VALUES ${new Array<string>(count).fill(row).join(', ')}
  ON CONFLICT DO UPDATE SET ${rollup.values.map((v) => `${v} = ${v} + excluded.${v}`).join(', ')}`;
}

/** Rows per statement: a delta's rows go in statements of this many, the rest one by one. */
const ROWS_PER_STATEMENT = 32;

/** The UTC day of submission of workloads row `w`, a floor division: SQLite's `/` truncates toward 0. */
const ROW_DAY = `w.submitted_at / ${DAY_MS} - (w.submitted_at % ${DAY_MS} < 0)`;

// The usage of these workloads (a JSON array of ids) at their rows' keys: its triggers move its rollup
// (migrations/v06-usage.ts). Only rows whose keys a write changed, or that it created, are named.
const PLACE_USAGE = `
  UPDATE workload_usage SET (organization_id, day, initiative_id, submitted_by, instance_type, failure_reason) = (
    SELECT w.organization_id, ${ROW_DAY}, w.initiative_id, w.submitted_by, w.instance_type,
      COALESCE(w.failure_reason, '')
    FROM workloads w WHERE w.workload_id = workload_usage.workload_id)
  WHERE workload_id IN (SELECT value FROM json_each(@ids)) AND workload_id IN (SELECT workload_id FROM workloads)`;

const APPLY_ROLLUP = Object.fromEntries(
  ROLLUPS.map((rollup) => [rollup.table, { many: applyRollupSql(rollup, ROWS_PER_STATEMENT), one: applyRollupSql(rollup, 1) }]),
) as Record<RollupTable, { many: string; one: string }>;

/** The rollups of one file, kept by its writer's transactions. */
export class SqliteRollups {
  readonly #statements: StatementCache;

  constructor(statements: StatementCache) {
    this.#statements = statements;
  }

  /** Inside a write transaction: places the usage of these workloads at their rows' keys (its triggers move its rollup). */
  placeUsage(workloadIds: readonly string[]): void {
    if (workloadIds.length > 0) this.#statements.get(PLACE_USAGE).run({ ids: JSON.stringify(workloadIds) });
  }

  /** Inside a write transaction: adds the deltas (rollups/deltas.ts) to each rollup, in statements of many rows. */
  apply(deltas: readonly RollupDelta[]): void {
    for (const delta of deltas) {
      const texts = APPLY_ROLLUP[delta.table];
      const rows = delta.rows;
      let at = 0;
      if (rows.length >= ROWS_PER_STATEMENT) {
        const many = this.#statements.get(texts.many);
        for (; at + ROWS_PER_STATEMENT <= rows.length; at += ROWS_PER_STATEMENT) {
          many.run(rows.slice(at, at + ROWS_PER_STATEMENT).flatMap((row) => [...row.key, ...row.values]));
        }
      }
      const one = this.#statements.get(texts.one);
      for (; at < rows.length; at += 1) one.run([...rows[at].key, ...rows[at].values]);
    }
  }
}
