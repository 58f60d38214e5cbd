// The rollups (src/store/rollups/) as SQLite's writer keeps them, per transaction, since schema v4
// dropped their triggers: each write reads the rollup columns of every row it may change before its
// first statement, takes them again as its statements return them (RETURNING: the last one returned
// of a row is what it became), and adds the difference of their figures to each rollup in one
// statement. A replayed write finds the same rows before and after and adds nothing. In a file of an
// older schema, which only the bench's dataset generator writes (at v2, then migrated so that v3
// backfills the rollups in one pass), the triggers keep them and the writer leaves them alone.
import type { Database } from 'better-sqlite3';
import { ROLLUP_SOURCE_COLUMNS, ROLLUPS, type RollupDefinition, type RollupSource, type RollupTable } from '../rollups/definitions.js';
import { rollupDeltas } from '../rollups/deltas.js';
import { DAY_MS } from '../rollups/figures.js';
import { usageKeysChanged } from '../rollups/usage-keys.js';
import { WRITER_ROLLUPS_SINCE } from './migration-v4.js';
import { schemaVersion } from './migrations.js';
import type { StatementCache } from './workload-sql.js';

/** What a write returns of each row it wrote, and reads of each row before: the row's rollup columns. */
export const SOURCE_COLUMNS = ['workload_id', ...ROLLUP_SOURCE_COLUMNS].join(', ');

export type SourceRow = RollupSource & { workload_id: string };

const ROLLUP_SOURCES = `
  SELECT ${SOURCE_COLUMNS} FROM workloads
  WHERE workload_id IN (SELECT value FROM json_each(@ids))`;

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

// The usage of these workloads (a JSON array of ids) at their rows' keys: its triggers move its rollup
// (migration-v6.ts). Only rows whose keys a write changed, or that it created, are named.
const PLACE_USAGE = `
  UPDATE workload_usage SET (organization_id, day, initiative_id, submitted_by, instance_type, failure_reason) = (
    SELECT w.organization_id, w.submitted_at / ${DAY_MS} - (w.submitted_at % ${DAY_MS} < 0), w.initiative_id, w.submitted_by, w.instance_type,
      COALESCE(w.failure_reason, '')
    FROM workloads w WHERE w.workload_id = workload_usage.workload_id)
  WHERE workload_id IN (SELECT value FROM json_each(@ids)) AND workload_id IN (SELECT workload_id FROM workloads)`;

const APPLY_ROLLUP = Object.fromEntries(
  ROLLUPS.map((rollup) => [rollup.table, { many: applyRollupSql(rollup, ROWS_PER_STATEMENT), one: applyRollupSql(rollup, 1) }]),
) as Record<RollupTable, { many: string; one: string }>;

/** The rollups of one file, kept by its writer's transactions (or by triggers, before schema v4). */
export class SqliteRollups {
  readonly #statements: StatementCache;
  /** Whether the writer keeps the rollups (schema v4 on), or triggers do. */
  readonly keptByWriter: boolean;

  constructor(db: Database, statements: StatementCache) {
    this.#statements = statements;
    this.keptByWriter = schemaVersion(db) >= WRITER_ROLLUPS_SINCE;
  }

  /** Inside a write transaction, before its first write: the rollup columns of those of `workloadIds` that exist, by id. */
  readSources(workloadIds: readonly string[]): Map<string, SourceRow> {
    if (workloadIds.length === 0 || !this.keptByWriter) return new Map();
    const rows = this.#statements.get(ROLLUP_SOURCES).all({ ids: JSON.stringify(workloadIds) }) as SourceRow[];
    return new Map(rows.map((row) => [row.workload_id, row]));
  }

  /**
   * Inside a write transaction, after its writes: adds to each rollup what the rows written became
   * (`after`) minus what they were (those of `before` that were written; `before` may hold more).
   */
  addChanges(before: ReadonlyMap<string, RollupSource>, after: ReadonlyMap<string, RollupSource>): void {
    if (after.size === 0 || !this.keptByWriter) return;
    const was: RollupSource[] = [];
    const is: RollupSource[] = [];
    const placed: string[] = [];
    for (const [id, row] of after) {
      const old = before.get(id);
      if (usageKeysChanged(old, row)) placed.push(id);
      // Most rewrites leave the rollup columns as they were (a new resourceVersion, exit code or name).
      if (old !== undefined && ROLLUP_SOURCE_COLUMNS.every((column) => old[column] === row[column])) continue;
      if (old !== undefined) was.push(old);
      is.push(row);
    }
    this.addDeltas(was, is);
    if (placed.length > 0) this.#statements.get(PLACE_USAGE).run({ ids: JSON.stringify(placed) });
  }

  /** Inside a write transaction: adds Σ figures(after) − Σ figures(before) to each rollup, one statement per table. */
  addDeltas(before: Iterable<RollupSource>, after: Iterable<RollupSource>): void {
    if (!this.keptByWriter) return;
    for (const delta of rollupDeltas(before, after)) {
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
