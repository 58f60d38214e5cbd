// A StatementCache that remembers the SQL it was asked for, so that tests can EXPLAIN the real texts.
import type { Statement } from 'better-sqlite3';
import { StatementCache } from '../../src/store/sqlite/statement-cache.js';

export class RecordingStatements extends StatementCache {
  readonly texts: string[] = [];

  override get(sql: string): Statement {
    this.texts.push(sql);
    return super.get(sql);
  }

  /** The query plan of every statement run so far, with the parameters they were run with. */
  plans(params: Record<string, unknown>): string[][] {
    return this.texts.map((sql) => {
      const names = [...sql.matchAll(/@(\w+)/g)].map((m) => m[1] ?? '');
      const bound = Object.fromEntries(names.map((name) => [name, params[name] ?? 0]));
      return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(bound) as { detail: string }[]).map((row) => row.detail);
    });
  }
}
