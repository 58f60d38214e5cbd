// The LifetimeRepository of the telemetry flow: each workload's GPU metric totals, in SQLite.
import type { Database, Statement } from 'better-sqlite3';
import { METRIC_NAMES, type MetricName } from '../../domain/metrics.js';
import type { LifetimeRepository, LifetimeTotals } from '../../domain/telemetry.js';

interface LifetimeRow {
  metric: string;
  sample_count: number;
  sum: number;
  min: number;
  max: number;
  current: number | null;
}

export class SqliteLifetimeStore implements LifetimeRepository {
  readonly #db: Database;
  readonly #load: Statement<[string], LifetimeRow>;
  readonly #save: Statement<[string, string, number, number, number, number, number | null]>;

  constructor(db: Database) {
    this.#db = db;
    this.#load = db.prepare<[string], LifetimeRow>('SELECT metric, sample_count, sum, min, max, current FROM workload_gpu_lifetime WHERE workload_id = ?');
    this.#save = db.prepare(
      'INSERT OR REPLACE INTO workload_gpu_lifetime (workload_id, metric, sample_count, sum, min, max, current) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
  }

  loadLifetime(workloadId: string): LifetimeTotals | undefined {
    const rows = this.#load.all(workloadId);
    if (rows.length === 0) return undefined;
    const totals: LifetimeTotals = {};
    for (const row of rows) {
      // A metric this build no longer knows is ignored rather than failing the read.
      if (!(METRIC_NAMES as readonly string[]).includes(row.metric)) continue;
      totals[row.metric as MetricName] = { count: row.sample_count, sum: row.sum, min: row.min, max: row.max, current: row.current };
    }
    return totals;
  }

  saveLifetimes(entries: readonly { workloadId: string; totals: LifetimeTotals }[]): void {
    this.#db.transaction(() => {
      for (const { workloadId, totals } of entries) {
        for (const name of METRIC_NAMES) {
          const t = totals[name];
          if (t === undefined || t.count <= 0) continue;
          this.#save.run(workloadId, name, t.count, t.sum, t.min, t.max, t.current);
        }
      }
    })();
  }
}
