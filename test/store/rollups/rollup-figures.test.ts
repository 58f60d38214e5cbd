// figures() against the SQL it twins: each row is inserted into a file of schema v2 under its own
// organization, then migration v3 backfills the rollups with figures() of migrations/v03-rollups.ts (v5 its
// own with the same figures, v11 the weekly one from the daily), so each rollup row holds exactly one
// row's figures.
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import fc from 'fast-check';
import { ROLLUPS, type RollupSource } from '../../../src/store/rollups/definitions.js';
import { anchorDayOf, DAY_MS, dayOf, figures, rollupKey, sqliteRound } from '../../../src/store/rollups/figures.js';
import { migrate, MIGRATIONS } from '../../../src/store/sqlite/migrations/migrate.js';
import { refillFailureReasons } from '../rollup-history.js';

const SEED = Number(process.env.FC_SEED ?? 20261127);
const HOUR_MS = 3_600_000;

type Row = Omit<RollupSource, 'organization_id'>;

/** Each row's rollup rows, as SQLite's migration v3 backfills them, in ROLLUPS order. */
function sqliteRollups(rows: readonly Row[]): Record<string, unknown>[][] {
  const db = new BetterSqlite3(':memory:');
  try {
    migrate(db, MIGRATIONS.filter((m) => m.version <= 2));
    const insert = db.prepare(`
      INSERT INTO workloads (workload_id, organization_id, cluster_id, namespace, name, kind, status, submitted_by,
        initiative_id, instance_type, gpu_count, submitted_at, started_at, completed_at, exit_code, is_managed,
        gpu_seconds_closed, open_gpus, open_gpu_start_sum, updated_at)
      VALUES (@id, @id, 'c', 'ns', 'n', 'Job', @status, @submitted_by, @initiative_id, @instance_type, 1, @submitted_at,
        @started_at, @completed_at, NULL, @is_managed, @gpu_seconds_closed, @open_gpus, @open_gpu_start_sum, 0)`);
    rows.forEach((row, i) => insert.run({ ...row, id: `org-${i}` }));
    migrate(db);
    refillFailureReasons(db, rows.map((row, i) => ({ workload_id: `org-${i}`, failure_reason: row.failure_reason })));
    return rows.map((_, i) => ROLLUPS.map((r) => db.prepare(`SELECT * FROM ${r.table} WHERE organization_id = ?`).get(`org-${i}`) as Record<string, unknown>));
  } finally {
    db.close();
  }
}

/** The same rollup rows from figures() and rollupKey(); none in a rollup that requires a column the row lacks. */
function ourRollups(rows: readonly Row[]): (Record<string, unknown> | undefined)[][] {
  return rows.map((row, i) => {
    const source: RollupSource = { ...row, organization_id: `org-${i}` };
    return ROLLUPS.map((r) => {
      if (r.requires !== undefined && source[r.requires] === null) return undefined;
      const figured = figures(source, anchorDayOf(r, dayOf(source.submitted_at)));
      const key = rollupKey(r, source);
      return Object.fromEntries([...r.keys.map((k, j) => [k, key[j]]), ...r.values.map((v) => [v, figured[v]])]);
    });
  });
}

const T = Date.parse('2026-11-10T00:00:00Z');
const base: Row = {
  initiative_id: 'llm', status: 'completed', submitted_by: 'alice', is_managed: 1, instance_type: 'p5',
  submitted_at: T + 1000, started_at: T + HOUR_MS, completed_at: T + 3 * HOUR_MS,
  gpu_seconds_closed: 8 * 7200, open_gpus: 0, open_gpu_start_sum: 0, failure_reason: null,
};
/** Aggregates of pods as REFRESH_AGGREGATES writes them: closed [start, end) and open starts, ms. */
const pods = (closed: [number, number, number][], open: [number, number][]) => ({
  gpu_seconds_closed: closed.reduce((s, [g, from, to]) => s + (g * Math.max(0, to - from)) / 1000, 0),
  open_gpus: open.reduce((s, [g]) => s + g, 0),
  open_gpu_start_sum: open.reduce((s, [g, from]) => s + (g * from) / 1000, 0),
});

const EDGE_CASES: Record<string, Row> = {
  'a finished row': base,
  'submitted at midnight': { ...base, submitted_at: T },
  'submitted in the last ms of a day': { ...base, submitted_at: T - 1 },
  'submitted before 1970, mid-day': { ...base, submitted_at: -DAY_MS - 5, started_at: -DAY_MS, completed_at: -1000 },
  'submitted before 1970, at a midnight': { ...base, submitted_at: -3 * DAY_MS, started_at: -3 * DAY_MS + 7, completed_at: null, status: 'running', ...pods([], [[2, -3 * DAY_MS + 7]]) },
  'submitted at 0 (the fallback of a row without time)': { ...base, submitted_at: 0, started_at: null, completed_at: null, status: 'pending', gpu_seconds_closed: 0 },
  'a running row with open and closed pods': { ...base, status: 'running', completed_at: null, ...pods([[2, T + HOUR_MS, T + 2 * HOUR_MS + 333]], [[4, T + HOUR_MS + 17], [1, T + 5 * HOUR_MS]]) },
  'a running row started the day before its submission day (clock skew)': { ...base, status: 'running', started_at: T - 5000, completed_at: null, ...pods([], [[1, T - 5000]]) },
  'a pending row': { ...base, status: 'pending', started_at: null, completed_at: null, gpu_seconds_closed: 0 },
  'a failed row': { ...base, status: 'failed' },
  'a cancelled row that never started': { ...base, status: 'cancelled', started_at: null, gpu_seconds_closed: 0 },
  'a finished row with a pod left open': { ...base, ...pods([[1, T + HOUR_MS, T + 2 * HOUR_MS]], [[8, T + HOUR_MS]]) },
  'a finished row whose open pod started after the completion (floored at 0)': { ...base, ...pods([[1, T + HOUR_MS, T + HOUR_MS + 60_000]], [[4, T + 4 * HOUR_MS]]) },
  'a finished row completed before it started (duration floored at 0)': { ...base, completed_at: T + HOUR_MS - 1 },
  'a running row with negative pod times': { ...base, submitted_at: -DAY_MS + 1, started_at: -1500, completed_at: null, status: 'running', ...pods([[3, -2500, -1000]], [[1, -1500]]) },
  'aggregates at a positive half ms (rounds up)': { ...base, gpu_seconds_closed: 2.5e-3, open_gpu_start_sum: 0.5e-3 },
  'aggregates at a negative half ms (rounds away from zero, unlike Math.round)': { ...base, status: 'running', completed_at: null, gpu_seconds_closed: 0, open_gpus: 1, open_gpu_start_sum: -2.5e-3 },
  'aggregates just below a half ms': { ...base, gpu_seconds_closed: 0.49999999999999994 / 1000, open_gpu_start_sum: -0.49999999999999994 / 1000 },
};

describe('store/rollups figures', () => {
  describe('against the figures SQL of schema v3', () => {
    const names = Object.keys(EDGE_CASES);
    const rows = Object.values(EDGE_CASES);
    const expected = sqliteRollups(rows);
    const actual = ourRollups(rows);
    names.forEach((name, i) => {
      it(`gives SQLite's figures and keys for ${name}`, () => {
        expect(actual[i]).to.deep.equal(expected[i]);
      });
    });

    it('gives SQLite\'s figures and keys for random rows, negative times and fractional aggregates included', () => {
      const time = fc.integer({ min: -3e12, max: 3e12 });
      const aggregate = fc.oneof(fc.double({ min: -1e10, max: 1e10, noNaN: true }), fc.integer({ min: -1e7, max: 1e7 }).map((n) => n / 2000));
      const row = fc.record({
        initiative_id: fc.constantFrom('llm', 'vision'),
        status: fc.constantFrom('pending', 'running', 'completed', 'failed', 'cancelled'),
        submitted_by: fc.constantFrom('alice', 'bob'),
        is_managed: fc.constantFrom(0, 1),
        instance_type: fc.constantFrom('p5', 'unknown'),
        submitted_at: time,
        started_at: fc.option(time),
        completed_at: fc.option(time),
        gpu_seconds_closed: aggregate,
        open_gpus: fc.integer({ min: 0, max: 64 }),
        open_gpu_start_sum: aggregate,
        failure_reason: fc.constantFrom(null, 'oom_killed', 'deleted'),
      });
      fc.assert(
        fc.property(fc.array(row, { minLength: 1, maxLength: 30 }), (generated) => {
          expect(ourRollups(generated)).to.deep.equal(sqliteRollups(generated));
        }),
        { numRuns: 60, seed: SEED },
      );
    });
  });

  it('rounds like SQLite\'s ROUND: half away from zero, in doubles', () => {
    const db = new BetterSqlite3(':memory:');
    try {
      const round = db.prepare('SELECT ROUND(?)').pluck();
      const values = [0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 1e15 + 0.5, -(1e15 + 0.5),
        2 ** 52 - 0.5, -(2 ** 52 - 0.5), 2 ** 52 + 1, 2 ** 53 + 2, -(2 ** 53 + 2), 1e300, -1e-300, 12345.4999, -12345.5001];
      for (const x of values) expect(sqliteRound(x), String(x)).to.equal(round.get(x));
      expect(Math.round(-2.5), 'why not Math.round').to.equal(-2);
    } finally {
      db.close();
    }
  });

  it('takes the day of submission as SQLite\'s floor division does, before 1970 included', () => {
    const db = new BetterSqlite3(':memory:');
    try {
      const day = db.prepare(`SELECT (CAST(@s AS INTEGER) / ${DAY_MS} - (CAST(@s AS INTEGER) % ${DAY_MS} < 0))`).pluck();
      const values = [0, 1, -1, DAY_MS, DAY_MS - 1, -DAY_MS, -DAY_MS + 1, -DAY_MS - 1, T, T - 1, 2 ** 53 - 1, -(2 ** 53) + 1, 8_640_000_000_000_000 - 1];
      for (const s of values) expect(dayOf(s), String(s)).to.equal(day.get({ s }));
      fc.assert(fc.property(fc.maxSafeInteger(), (s) => dayOf(s) === day.get({ s })), { numRuns: 2000, seed: SEED });
    } finally {
      db.close();
    }
  });
});
