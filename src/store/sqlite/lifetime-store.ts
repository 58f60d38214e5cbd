// The LifetimeRepository of the telemetry flow: each workload's GPU metric totals, in SQLite, and
// what its GPUs did (workload_usage, added to; its triggers keep the daily rollup, migrations/v06-usage.ts).
import type { Database, Statement } from 'better-sqlite3';
import type { GpuUsage } from '../../domain/gpu-usage.js';
import { METRIC_NAMES, type MetricName } from '../../domain/metrics.js';
import type { LifetimeRepository, LifetimeSave, LifetimeTotals } from '../../domain/telemetry.js';
import type { WorkloadWriter } from '../writes/workload-writer.js';
import type { SqliteExecutor } from './executor.js';

interface LifetimeRow {
  metric: string;
  sample_count: number;
  sum: number;
  min: number;
  max: number;
  current: number | null;
}

/** An upsert's SET of `column`: what the row holds plus what the statement adds. */
const added = (column: string) => `${column} = u.${column} + excluded.${column}`;

export class SqliteLifetimeStore implements LifetimeRepository {
  readonly #db: Database;
  readonly #load: Statement<[string], LifetimeRow>;
  readonly #save: Statement<[string, string, number, number, number, number, number | null]>;
  readonly #addUsage: Statement<GpuUsage & { workloadId: string }>;

  constructor(db: Database) {
    this.#db = db;
    this.#load = db.prepare<[string], LifetimeRow>(
      'SELECT metric, sample_count, sum, min, max, current FROM workload_gpu_lifetime WHERE workload_id = ?',
    );
    this.#save = db.prepare(
      'INSERT OR REPLACE INTO workload_gpu_lifetime (workload_id, metric, sample_count, sum, min, max, current) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    // A new row takes its keys from the workloads row when there is one (else its insert trigger will).
    this.#addUsage = db.prepare(`
      INSERT INTO workload_usage AS u (workload_id, util_seconds, util_weighted, idle_seconds, power_seconds, energy_dj, gpu_errors,
        organization_id, day, initiative_id, submitted_by, instance_type, failure_reason)
      SELECT @workloadId, @utilSeconds, @utilWeighted, @idleSeconds, @powerSeconds, @energyDj, @gpuErrors,
        w.organization_id, w.submitted_at / 86400000 - (w.submitted_at % 86400000 < 0), w.initiative_id, w.submitted_by, w.instance_type,
        CASE WHEN w.workload_id IS NULL THEN NULL ELSE COALESCE(w.failure_reason, '') END
      FROM (SELECT 1) LEFT JOIN workloads w ON w.workload_id = @workloadId
      WHERE true
      ON CONFLICT (workload_id) DO UPDATE SET ${added('util_seconds')}, ${added('util_weighted')},
        ${added('idle_seconds')}, ${added('power_seconds')},
        ${added('energy_dj')}, ${added('gpu_errors')}`);
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

  saveLifetimes(entries: readonly LifetimeSave[]): void {
    this.#db.transaction(() => {
      for (const { workloadId, totals, usage } of entries) {
        if (usage !== undefined) this.#addUsage.run({ workloadId, ...usage });
        for (const name of METRIC_NAMES) {
          const t = totals[name];
          if (t === undefined || t.count <= 0) continue;
          this.#save.run(workloadId, name, t.count, t.sum, t.min, t.max, t.current);
        }
      }
    })();
  }
}

/**
 * Saves on a connection that the store's writer also writes (the write worker's, or the main
 * thread's without one): each save waits for the connection's work before it (executor.ts), then
 * the workloads it brought new XID errors for have their failed rows rewritten (gpu_error).
 */
export function lifetimeSaves(
  stored: SqliteLifetimeStore,
  parts: { executor: SqliteExecutor; writer: Pick<WorkloadWriter, 'escalateGpuErrors'> },
): (entries: readonly LifetimeSave[]) => Promise<void> {
  return async (entries) => {
    await parts.executor.exclusive(async () => stored.saveLifetimes(entries));
    const erred = entries.filter((entry) => (entry.usage?.gpuErrors ?? 0) > 0).map((entry) => entry.workloadId);
    if (erred.length > 0) await parts.writer.escalateGpuErrors(erred);
  };
}
