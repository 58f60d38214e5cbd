// The SQL behind a scenario, exactly as the store runs it: the store is given a Database whose
// prepared statements record each execution (SQL text and bound values), then every recorded
// statement is explained (EXPLAIN QUERY PLAN) and timed on its own. Nothing here rebuilds the SQL,
// so the plans cannot drift from what src/store sends.
import type { Database, Statement } from 'better-sqlite3';

export interface ExecutedStatement {
  sql: string;
  args: unknown[];
}

export interface StatementProfile {
  sql: string;
  /** The bound values (named parameters object or positional list). */
  params: unknown;
  plan: string[];
  medianMs: number;
  runs: number;
  rows: number;
}

export interface OperationProfile {
  /** Median of the whole store call (all its statements and the row mapping), ms. */
  medianMs: number;
  runs: number;
  statements: StatementProfile[];
}

const EXECUTING_METHODS = new Set<PropertyKey>(['all', 'get', 'run', 'iterate']);

/** Wraps a Database so the statements it prepares report their executions to `current`. */
export class SqlRecorder {
  readonly db: Database;
  #current: ExecutedStatement[] | null = null;

  constructor(readonly real: Database) {
    const record = (sql: string, args: unknown[]) => this.#current?.push({ sql, args });
    this.db = new Proxy(real, {
      get(target, property) {
        if (property === 'prepare') {
          return (sql: string) => recordingStatement(target.prepare(sql), sql, record);
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Runs `operation` once and returns the statements it executed, in order. */
  async capture(operation: () => Promise<unknown>): Promise<ExecutedStatement[]> {
    const executed: ExecutedStatement[] = [];
    this.#current = executed;
    try {
      await operation();
    } finally {
      this.#current = null;
    }
    return executed;
  }
}

function recordingStatement(statement: Statement, sql: string, record: (sql: string, args: unknown[]) => void): Statement {
  return new Proxy(statement, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!EXECUTING_METHODS.has(property)) return method.bind(target);
      return (...args: unknown[]) => {
        record(sql, args);
        return method.apply(target, args);
      };
    },
  });
}

/** EXPLAIN QUERY PLAN of a statement with its bound values, as an indented tree. */
export function explain(db: Database, sql: string, args: unknown[]): string[] {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { id: number; parent: number; detail: string }[];
  const depth = new Map<number, number>([[0, -1]]);
  return rows.map((row) => {
    const level = (depth.get(row.parent) ?? -1) + 1;
    depth.set(row.id, level);
    return `${'  '.repeat(level)}${row.detail}`;
  });
}

/** Median wall time of `task` over runs within `budgetMs` (at least `minRuns`, at most `maxRuns`), after one warm-up. */
export async function timeIt(task: () => unknown, options: { budgetMs: number; minRuns?: number; maxRuns?: number }): Promise<{ medianMs: number; runs: number }> {
  await task();
  const times: number[] = [];
  const started = performance.now();
  const minRuns = options.minRuns ?? 5;
  const maxRuns = options.maxRuns ?? 200;
  while (times.length < maxRuns && (times.length < minRuns || performance.now() - started < options.budgetMs)) {
    const begin = performance.now();
    await task();
    times.push(performance.now() - begin);
  }
  times.sort((a, b) => a - b);
  return { medianMs: Math.round((times[Math.floor(times.length / 2)] ?? 0) * 1000) / 1000, runs: times.length };
}

/** Profiles one store call: its total time, then each of its statements' plan and time. */
export async function profileOperation(recorder: SqlRecorder, operation: () => Promise<unknown>, options: { budgetMs: number }): Promise<OperationProfile> {
  const executed = await recorder.capture(operation);
  const total = await timeIt(operation, options);
  const statements: StatementProfile[] = [];
  for (const { sql, args } of executed) {
    const statement = recorder.real.prepare(sql);
    const rows = statement.reader ? (statement.all(...args) as unknown[]).length : 0;
    const timing = await timeIt(() => (statement.reader ? statement.all(...args) : undefined), options);
    statements.push({ sql: normalizeSql(sql), params: args.length === 1 ? args[0] : args, plan: explain(recorder.real, sql, args), ...timing, rows });
  }
  return { medianMs: total.medianMs, runs: total.runs, statements };
}

function normalizeSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim();
}
