// Prototype behind the statistics recommendation of docs/performance.md: daily rollups per group
// dimension, and a rolling window read as whole days from the rollup plus the partial first day from
// the raw rows. Builds the rollups on a copy of a cached benchmark file, checks that they give the
// same figures as a scan of the rows, and times both. Not used by the service: schema v3
// (src/store/migration-v3.ts) holds the rollups this led to; its tables are prototype_daily_* so as
// not to touch the service's stats_daily_*.
//   npx tsx bench/prototypes/stats-rollup.ts [--rows 1000000]
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/store/sqlite/database.js';
import { BENCH_NOW, CACHE_DIR, ensureWorkloadsDb } from '../data/generate-workloads.js';
import { timeIt } from '../lib/measure/sql-profile.js';

const DAY_MS = 86_400_000;
const DIMENSIONS = ['initiative_id', 'submitted_by', 'instance_type'] as const;
type Dimension = (typeof DIMENSIONS)[number];

const GPU_SECONDS = 'MAX(0.0, w.gpu_seconds_closed + w.open_gpus * (COALESCE(w.completed_at, @now) / 1000.0) - w.open_gpu_start_sum)';
const DURATION_MS = 'CASE WHEN w.started_at IS NULL THEN 0 ELSE MAX(0, COALESCE(w.completed_at, @now) - w.started_at) END';

/** Figures of one (organization, day, key): linear in `now`, so unfinished workloads fit too. */
function createRollup(db: Database, dimension: Dimension): void {
  db.exec(`
    DROP TABLE IF EXISTS prototype_daily_${dimension};
    CREATE TABLE prototype_daily_${dimension} (
      organization_id TEXT NOT NULL, day INTEGER NOT NULL, key TEXT NOT NULL,
      workloads INTEGER NOT NULL, completed INTEGER NOT NULL, failed INTEGER NOT NULL, started INTEGER NOT NULL,
      finished_duration_ms INTEGER NOT NULL, unfinished_started INTEGER NOT NULL, unfinished_started_at_sum INTEGER NOT NULL,
      finished_gpu_seconds REAL NOT NULL, open_gpus INTEGER NOT NULL, open_start_minus_closed REAL NOT NULL,
      PRIMARY KEY (organization_id, day, key)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO prototype_daily_${dimension}
    SELECT organization_id, submitted_at / ${DAY_MS}, ${dimension},
      COUNT(*), TOTAL(status = 'completed'), TOTAL(status = 'failed'), COUNT(started_at),
      TOTAL(CASE WHEN completed_at IS NOT NULL AND started_at IS NOT NULL THEN MAX(0, completed_at - started_at) END),
      TOTAL(CASE WHEN completed_at IS NULL AND started_at IS NOT NULL THEN 1 END),
      TOTAL(CASE WHEN completed_at IS NULL THEN started_at END),
      TOTAL(CASE WHEN completed_at IS NOT NULL THEN MAX(0.0, gpu_seconds_closed + open_gpus * (completed_at / 1000.0) - open_gpu_start_sum) END),
      TOTAL(CASE WHEN completed_at IS NULL THEN open_gpus END),
      TOTAL(CASE WHEN completed_at IS NULL THEN open_gpu_start_sum - gpu_seconds_closed END)
    FROM workloads GROUP BY 1, 2, 3;`);
}

/** Whole days [first full day, today] from the rollup + raw rows of the partial first day. */
function rollupSql(dimension: Dimension, grouped: boolean): string {
  const firstFullDay = `(CAST(@from / ${DAY_MS} AS INTEGER) + 1)`;
  return `
    WITH parts AS (
      SELECT key, workloads, completed, failed, started,
        finished_duration_ms + unfinished_started * @now - unfinished_started_at_sum AS duration_ms,
        finished_gpu_seconds + open_gpus * (@now / 1000.0) - open_start_minus_closed AS gpu_seconds
      FROM prototype_daily_${dimension}
      WHERE organization_id = @org AND day >= ${firstFullDay} AND day <= CAST(@now / ${DAY_MS} AS INTEGER)
      UNION ALL
      SELECT w.${dimension}, 1, w.status = 'completed', w.status = 'failed', w.started_at IS NOT NULL, ${DURATION_MS}, ${GPU_SECONDS}
      FROM workloads w
      WHERE w.organization_id = @org AND w.submitted_at >= @from AND w.submitted_at < ${firstFullDay} * ${DAY_MS}
    )
    SELECT ${grouped ? 'key,' : ''} TOTAL(workloads) AS workload_count, TOTAL(gpu_seconds) / 3600.0 AS gpu_hours,
      TOTAL(duration_ms) / 1000.0 / MAX(TOTAL(started), 1) AS average_duration, TOTAL(completed) AS completed, TOTAL(failed) AS failed
    FROM parts ${grouped ? 'GROUP BY key ORDER BY gpu_hours DESC, key ASC' : ''}`;
}

/** The shape of the store's statistics query (a scan of the rows in the window). */
function rawSql(dimension: Dimension | null): string {
  return `
    SELECT ${dimension === null ? '' : `w.${dimension} AS key,`} COUNT(*) AS workload_count, TOTAL(${GPU_SECONDS}) / 3600.0 AS gpu_hours,
      TOTAL(CASE WHEN w.started_at IS NULL THEN NULL ELSE CAST(${DURATION_MS} / 1000 AS INTEGER) END) / MAX(COUNT(w.started_at), 1) AS average_duration,
      TOTAL(w.status = 'completed') AS completed, TOTAL(w.status = 'failed') AS failed
    FROM workloads w WHERE w.organization_id = @org AND w.submitted_at >= @from AND w.submitted_at < @before
    ${dimension === null ? '' : `GROUP BY w.${dimension} ORDER BY gpu_hours DESC, key ASC`}`;
}

type Figures = { key?: string; workload_count: number; gpu_hours: number; average_duration: number; completed: number; failed: number };

async function main(): Promise<void> {
  const rowsArg = process.argv[process.argv.indexOf('--rows') + 1];
  const rows = process.argv.includes('--rows') && rowsArg !== undefined ? Number(rowsArg) : 1_000_000;
  const dataset = await ensureWorkloadsDb(rows, { log: (line) => console.log(line) });
  const workDir = join(CACHE_DIR, `prototype-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  const path = join(workDir, 'index.db');
  copyFileSync(dataset.path, path);
  const db = openDatabase(path);
  try {
    const started = performance.now();
    for (const dimension of DIMENSIONS) createRollup(db, dimension);
    console.log(`rollups built in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
      DIMENSIONS.map((d) => `${d} ${(db.prepare(`SELECT COUNT(*) FROM prototype_daily_${d}`).pluck().get() as number).toLocaleString('en-US')} rows`).join(', '));
    // A window whose start is not on a day boundary, like last_30_days at any time of day.
    const params = { org: 'acme', now: BENCH_NOW, from: BENCH_NOW - 30 * DAY_MS + 7 * 3_600_000, before: BENCH_NOW + 1 };
    for (const dimension of [null, ...DIMENSIONS] as const) {
      const raw = db.prepare(rawSql(dimension));
      const rollup = db.prepare(rollupSql(dimension ?? 'instance_type', dimension !== null));
      const rawRows = raw.all(params) as Figures[];
      const rollupRows = rollup.all(params) as Figures[];
      const sameOrder = rawRows.length === rollupRows.length && rawRows.every((r, i) => r.key === rollupRows[i]?.key);
      let worst = 0;
      rawRows.forEach((r, i) => {
        const other = rollupRows[i];
        for (const field of ['workload_count', 'gpu_hours', 'completed', 'failed'] as const) {
          worst = Math.max(worst, Math.abs(r[field] - (other?.[field] ?? Number.NaN)) / Math.max(1e-9, Math.abs(r[field])));
        }
      });
      const rawTime = await timeIt(() => raw.all(params), { budgetMs: 2000 });
      const rollupTime = await timeIt(() => rollup.all(params), { budgetMs: 2000 });
      console.log(`${(dimension ?? 'summary').padEnd(14)} raw ${rawTime.medianMs.toFixed(1).padStart(7)} ms   rollup ${rollupTime.medianMs.toFixed(1).padStart(6)} ms   ` +
        `groups ${rawRows.length}/${rollupRows.length}, same order ${sameOrder}, worst relative difference ${worst.toExponential(1)}`);
    }
  } finally {
    db.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
