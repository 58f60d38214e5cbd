// GPU telemetry that every replica shares on PostgreSQL (schema v2): the writer of a cluster stores one
// bucket per workload (telemetry_summary_seconds wide) and adds it to the workload's lifetime totals
// in the same statement; every replica answers /metrics and rankings from those rows, so every
// replica gives the same answer. Arrays hold one figure per metric slot (METRIC_NAMES order).
import type pg from 'pg';
import { systemClock, type Clock } from '../../domain/clock.js';
import { METRIC_NAMES, type MetricName } from '../../domain/metrics.js';
import type { GpuBucketFigures, GpuBucketRow, GpuSummaryStore, GpuWindowTotals, LifetimeTotals } from '../../domain/telemetry.js';
import { USAGE_FIGURES, USAGE_KEYS, USAGE_VALUES } from '../usage/usage-columns.js';
import type { WorkloadWriter } from '../writes/workload-writer.js';
import { asIndexBusy } from './errors.js';
import { inTransaction } from './transaction.js';
import { poolWriter } from './writers.js';
import { addToUsageRollups } from './usage-writes.js';

const HOUR_MS = 3_600_000;
const SLOTS = METRIC_NAMES.map((_, i) => i + 1);

// A bucket already stored for a workload is left alone (DO NOTHING), and only the rows this statement
// inserted reach the lifetime totals, whose last_minute guard also refuses anything not newer: a
// retried flush, or a deposed writer's late one, adds nothing twice.
// Usage (migrations/v06-usage.ts) is added with the bucket's rows, once like them: to workload_usage, which
// takes a new row's keys from its workloads row when there is one (the row writers move it later
// otherwise, usage-writes.ts), and at those keys to the rollup. Rows come sorted by workload_id, so
// usage rows are locked in that order, then rollup rows in key order.
const WRITE_BUCKET = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
    workload_id text, cluster_id text, count integer[], sum float8[], min float8[], max float8[],
    latest_sum float8[], latest_count integer[], current float8[], ${USAGE_FIGURES.map((f) => `${f} bigint`).join(', ')})
), inserted AS (
  INSERT INTO workload_gpu_buckets (workload_id, bucket_at, cluster_id, count, sum, min, max, latest_sum, latest_count)
  SELECT workload_id, $2, cluster_id, count, sum, min, max, latest_sum, latest_count FROM input
  ON CONFLICT (workload_id, bucket_at) DO NOTHING
  RETURNING workload_id
), lifetime AS (
  INSERT INTO workload_gpu_lifetime AS l (workload_id, metric, sample_count, sum, min, max, current, last_minute)
  SELECT i.workload_id, m.metric, i.count[m.slot], i.sum[m.slot], i.min[m.slot], i.max[m.slot], i.current[m.slot], $2
  FROM input i JOIN inserted USING (workload_id) CROSS JOIN unnest($3::text[]) WITH ORDINALITY AS m(metric, slot)
  WHERE i.count[m.slot] > 0
  ON CONFLICT (workload_id, metric) DO UPDATE SET
    sample_count = l.sample_count + excluded.sample_count,
    sum = l.sum + excluded.sum,
    min = LEAST(l.min, excluded.min),
    max = GREATEST(l.max, excluded.max),
    current = COALESCE(excluded.current, l.current),
    last_minute = excluded.last_minute
  WHERE l.last_minute < excluded.last_minute
  RETURNING 1
), prior AS (
  SELECT u.workload_id, u.day FROM workload_usage u JOIN input i USING (workload_id)
), usage AS (
  INSERT INTO workload_usage AS u (workload_id, ${USAGE_FIGURES.join(', ')}, ${USAGE_KEYS.join(', ')})
  SELECT i.workload_id, ${USAGE_FIGURES.map((f) => `i.${f}`).join(', ')},
    w.organization_id, floor(w.submitted_at / 86400000.0)::bigint, w.initiative_id, w.submitted_by, w.instance_type,
    CASE WHEN w.workload_id IS NULL THEN NULL ELSE COALESCE(w.failure_reason, '') END
  FROM input i JOIN inserted USING (workload_id)
    LEFT JOIN workload_keys k ON k.workload_id = i.workload_id
    LEFT JOIN workloads w ON w.workload_id = k.workload_id AND w.submitted_at = k.submitted_at
  WHERE ${USAGE_FIGURES.map((f) => `i.${f} <> 0`).join(' OR ')}
  ORDER BY i.workload_id
  ON CONFLICT (workload_id) DO UPDATE SET ${USAGE_FIGURES.map((f) => `${f} = u.${f} + excluded.${f}`).join(', ')},
    ${USAGE_KEYS.map((k) => `${k} = CASE WHEN u.day IS NULL THEN excluded.${k} ELSE u.${k} END`).join(', ')}
  RETURNING u.workload_id, ${USAGE_KEYS.map((k) => `u.${k}`).join(', ')}, ${USAGE_VALUES.map((v) => `u.${v}`).join(', ')}
), usage_added AS (
  -- What this bucket adds where the usage was counted already; everything where it was not (its
  -- workloads row was written by a transaction this one could not see yet).
  SELECT ${USAGE_KEYS.map((k) => `a.${k}`).join(', ')},
    ${USAGE_VALUES.map((v) => `CASE WHEN p.day IS NOT NULL THEN i.${v} ELSE a.${v} END AS ${v}`).join(', ')}
  FROM usage a JOIN input i USING (workload_id) LEFT JOIN prior p USING (workload_id)
), ${addToUsageRollups('usage_added', 'usage')}
SELECT (SELECT count(*) FROM inserted)::int AS stored, (SELECT count(*) FROM lifetime)::int AS lifetimes`;

const arrayOf = (figure: (slot: number) => string): string => `ARRAY[${SLOTS.map(figure).join(', ')}]`;

// One pass over the hour's buckets gives each workload's totals and its newest bucket, whose latest
// figures come from a primary-key lookup. A join of the two passes instead left the plan to the row
// estimates: on a table not analyzed yet, a nested loop of 15,600 × 15,600 rows took 39 s (5 ms after
// ANALYZE); the lookup's cost never depends on them.
const CLEAR_LAST_HOUR = 'DELETE FROM workload_gpu_last_hour WHERE cluster_id = $1';
const FILL_LAST_HOUR = `INSERT INTO workload_gpu_last_hour (workload_id, cluster_id, newest_at, count, sum, latest_sum, latest_count)
   SELECT h.workload_id, $1, h.newest_at, h.count, h.sum, n.latest_sum, n.latest_count
   FROM (
     SELECT workload_id, MAX(bucket_at) AS newest_at,
            ${arrayOf((s) => `SUM(count[${s}])`)} AS count, ${arrayOf((s) => `SUM(sum[${s}])`)} AS sum
     FROM workload_gpu_buckets WHERE cluster_id = $1 AND bucket_at >= $2 AND bucket_at < $3 GROUP BY workload_id
   ) h
   CROSS JOIN LATERAL (
     SELECT latest_sum, latest_count FROM workload_gpu_buckets b WHERE b.workload_id = h.workload_id AND b.bucket_at = h.newest_at
   ) n`;

const WINDOW = `
SELECT ${arrayOf((s) => `SUM(b.count[${s}])`)}::float8[] AS count,
       ${arrayOf((s) => `SUM(b.sum[${s}])`)}::float8[] AS sum,
       ${arrayOf((s) => `MIN(b.min[${s}])`)} AS min,
       ${arrayOf((s) => `MAX(b.max[${s}])`)} AS max,
       n.latest_sum, n.latest_count
FROM workload_gpu_buckets b
CROSS JOIN LATERAL (
  SELECT latest_sum, latest_count FROM workload_gpu_buckets
  WHERE workload_id = $1 AND bucket_at >= $2 AND bucket_at < $3 ORDER BY bucket_at DESC LIMIT 1
) n
WHERE b.workload_id = $1 AND b.bucket_at >= $2 AND b.bucket_at < $3
GROUP BY n.latest_sum, n.latest_count`;

const LAST_HOUR = `
SELECT workload_id, count[$1]::float8 AS count, sum[$1] AS sum, latest_sum[$1] AS latest_sum, latest_count[$1] AS latest_count
FROM workload_gpu_last_hour WHERE newest_at >= $2 AND count[$1] > 0`;

const LIFETIME = 'SELECT metric, sample_count::float8 AS count, sum, min, max, current FROM workload_gpu_lifetime WHERE workload_id = $1';

const BUCKETS = 'SELECT count, sum, min, max FROM workload_gpu_buckets WHERE workload_id = $1 AND bucket_at >= $2 AND bucket_at < $3';

// The lifetime counts in the same statement as the buckets, so both come from one snapshot: a bucket
// written between two statements would make them disagree (its rows add to both in one statement).
const LIFETIME_BUCKETS = `
SELECT count, sum, min, max,
       (SELECT jsonb_object_agg(metric, sample_count) FROM workload_gpu_lifetime WHERE workload_id = $1) AS lifetime
FROM workload_gpu_buckets WHERE workload_id = $1`;

type BucketFiguresRow = { count: number[]; sum: number[]; min: (number | null)[]; max: (number | null)[] };
type WindowRow = {
  count: number[];
  sum: (number | null)[];
  min: (number | null)[];
  max: (number | null)[];
  latest_sum: number[];
  latest_count: number[];
};
type LastHourRow = { workload_id: string; count: number; sum: number; latest_sum: number | null; latest_count: number | null };
type LastHourFigures = { sum: number; count: number; latestSum: number; latestCount: number };
type LifetimeRow = { metric: string; count: number; sum: number; min: number; max: number; current: number | null };

function bucketFigures(row: BucketFiguresRow): GpuBucketFigures {
  return { count: row.count, sum: row.sum, min: row.min, max: row.max };
}

/** JSON has no NaN or Infinity: figures are finite or null by construction; this keeps the promise. */
function finiteOrNull(values: readonly (number | null)[]): (number | null)[] {
  return values.map((v) => (v === null || Number.isFinite(v) ? v : null));
}

export class PostgresGpuSummaries implements GpuSummaryStore {
  readonly #primary: pg.Pool;
  readonly #readers: pg.Pool;
  /** Rewrites the failed rows a bucket brought new XID errors for (gpu_error), in a transaction of its own. */
  readonly #rows: Pick<WorkloadWriter, 'escalateGpuErrors'>;

  /** Writes go to `primary`; reads to `readers` (the read-only URL when one is set). `clock` stamps the rows gpu_error rewrites. */
  constructor(pools: { primary: pg.Pool; readers: pg.Pool; clock?: Clock }) {
    this.#primary = pools.primary;
    this.#readers = pools.readers;
    this.#rows = poolWriter(pools.primary, { clock: pools.clock ?? systemClock });
  }

  async writeBucket(bucketAt: number, rows: readonly GpuBucketRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const sorted = [...rows].sort((a, b) => (a.workloadId < b.workloadId ? -1 : a.workloadId > b.workloadId ? 1 : 0));
    const input = sorted.map((r) => ({
      workload_id: r.workloadId, cluster_id: r.clusterId,
      count: r.count, sum: finiteOrNull(r.sum), min: finiteOrNull(r.min), max: finiteOrNull(r.max),
      latest_sum: finiteOrNull(r.latestSum), latest_count: r.latestCount, current: finiteOrNull(r.current),
      util_seconds: r.usage.utilSeconds, util_weighted: r.usage.utilWeighted, idle_seconds: r.usage.idleSeconds,
      power_seconds: r.usage.powerSeconds, energy_dj: r.usage.energyDj, gpu_errors: r.usage.gpuErrors,
    }));
    const { rows: [result] } = await this.#primary.query<{ stored: number }>(WRITE_BUCKET, [JSON.stringify(input), bucketAt, METRIC_NAMES]);
    const stored = result?.stored ?? 0;
    // A retried bucket (stored 0) added no errors, so has nothing to rewrite.
    const erred = sorted.filter((r) => r.usage.gpuErrors > 0).map((r) => r.workloadId);
    if (stored > 0 && erred.length > 0) await this.#rows.escalateGpuErrors(erred);
    return stored;
  }

  async refreshLastHour(clusterId: string, to: number): Promise<void> {
    const client = await this.#primary.connect();
    try {
      await inTransaction(client, async () => {
        await client.query(CLEAR_LAST_HOUR, [clusterId]);
        await client.query(FILL_LAST_HOUR, [clusterId, to - HOUR_MS, to]);
      });
    } finally {
      client.release();
    }
  }

  async pruneBuckets(clusterId: string, before: number): Promise<number> {
    const result = await this.#primary.query(
      'DELETE FROM workload_gpu_buckets WHERE cluster_id = $1 AND bucket_at < $2',
      [clusterId, before],
    );
    return result.rowCount ?? 0;
  }

  async window(workloadId: string, window: { from: number; to: number }): Promise<GpuWindowTotals | null> {
    const { rows: [row] } = await this.#read(() =>
      this.#readers.query<WindowRow>(WINDOW, [workloadId, window.from, window.to]),
    );
    if (row === undefined) return null;
    return {
      count: row.count.map((v) => v ?? 0), sum: row.sum.map((v) => v ?? 0), min: row.min, max: row.max,
      latestSum: row.latest_sum, latestCount: row.latest_count,
    };
  }

  async buckets(workloadId: string, window: { from: number; to: number }): Promise<GpuBucketFigures[]> {
    const { rows } = await this.#read(() => this.#readers.query<BucketFiguresRow>(BUCKETS, [workloadId, window.from, window.to]));
    return rows.map(bucketFigures);
  }

  async lifetimeBuckets(workloadId: string): Promise<{ buckets: GpuBucketFigures[]; counts: Partial<Record<MetricName, number>> }> {
    const { rows } = await this.#read(() =>
      this.#readers.query<BucketFiguresRow & { lifetime: Record<string, number> | null }>(LIFETIME_BUCKETS, [workloadId]),
    );
    const counts: Partial<Record<MetricName, number>> = {};
    for (const [metric, count] of Object.entries(rows[0]?.lifetime ?? {})) {
      const name = METRIC_NAMES.find((m) => m === metric);
      if (name !== undefined) counts[name] = Number(count);
    }
    return { buckets: rows.map(bucketFigures), counts };
  }

  async lastHour(slot: number, now: number): Promise<Map<string, LastHourFigures>> {
    const { rows } = await this.#read(() => this.#readers.query<LastHourRow>(LAST_HOUR, [slot + 1, now - HOUR_MS]));
    const result = new Map<string, LastHourFigures>();
    for (const row of rows) {
      result.set(row.workload_id, { sum: row.sum, count: row.count, latestSum: row.latest_sum ?? 0, latestCount: row.latest_count ?? 0 });
    }
    return result;
  }

  async lifetime(workloadId: string): Promise<LifetimeTotals | undefined> {
    const { rows } = await this.#read(() => this.#readers.query<LifetimeRow>(LIFETIME, [workloadId]));
    if (rows.length === 0) return undefined;
    const totals: LifetimeTotals = {};
    for (const row of rows) {
      const name = METRIC_NAMES.find((m) => m === row.metric);
      if (name !== undefined) totals[name] = { count: row.count, sum: row.sum, min: row.min, max: row.max, current: row.current };
    }
    return totals;
  }

  async #read<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      throw asIndexBusy(error);
    }
  }
}
