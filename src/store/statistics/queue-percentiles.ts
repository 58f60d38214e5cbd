// The percentiles of queue time that statistics add on request (`queue_percentiles`): the nearest
// rank (src/domain/percentiles.ts) over the exact waits of every workload of the filter, overall and
// per group, read from the rows at the time of reading. Exact rather than from a histogram: the value
// is the queue_seconds of one of the workloads counted. The rows of the window are one range of
// workloads_org_submitted, which covers every column read here.
//
// SQLite sorts each group's waits in the aggregate SORTED_WAITS (a JS function of the connection,
// src/store/sqlite/sorted-waits.ts), which keeps the waits out of row objects: a month of a
// large organization costs a third of reading them as rows. PostgreSQL numbers them in a window and
// returns only the rows at the asked ranks.
//
// Either reads at most `exactWaits` + 1 workloads (EXACT_QUEUE_WAITS, src/query/ports.ts), so that a
// wide custom range cannot make one request gather and sort an unbounded set. A range holding more
// than `exactWaits` is read again into wait buckets (wait-buckets.ts): memory by group and bucket,
// not by row; each percentile within WAIT_BUCKET_ERROR below the exact one.
import { nearestRank, type Percentile } from '../../domain/percentiles.js';
import type { QueuePercentiles, StatsGroupKey, WorkloadFilter } from '../../query/ports.js';
import { SQLITE, type SqlDialect } from '../sql/dialect.js';
import { GROUP_COLUMNS } from './group-columns.js';
import { queueMsSql, whereOf, type SqlWhere } from '../sql/workload-sql.js';
import { waitBucketSql, WaitBuckets, type WaitBucketRow } from './wait-buckets.js';

/** The SQLite aggregate of a group's waits: a blob of float64s, ascending. */
export const SORTED_WAITS = 'gpucap_sorted_waits';
/** The SQLite aggregate of (key, wait in ms) into every group's wait buckets: JSON [key, bucket, n, low] rows. */
export const WAIT_BUCKETS = 'gpucap_wait_buckets';

export type PercentileOptions = { groupBy: StatsGroupKey | null; percentiles: readonly Percentile[] };

/**
 * SQLite: each group's waits, sorted, and their count (one row with key '' without groupBy), over at
 * most `read` workloads of the filter.
 */
export function sortedWaitsQuery(filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number, read: number): SqlWhere {
  const where = whereOf(SQLITE, filter);
  const key = groupBy === null ? '' : `${GROUP_COLUMNS[groupBy]} AS key, `;
  const grouped = groupBy === null ? '' : ' GROUP BY key';
  return {
    sql:
      `SELECT ${groupBy === null ? "''" : 'key'} AS key, COUNT(*) AS n, ${SORTED_WAITS}(wait) AS waits ` +
      `FROM (SELECT ${key}${queueMsSql(SQLITE)} AS wait FROM workloads w WHERE ${where.sql} LIMIT @read)${grouped}`,
    params: { ...where.params, now, read },
  };
}

export interface SortedWaitsRow {
  key: string;
  n: number;
  /** NULL when no row matched (an aggregate without GROUP BY still returns its one row). */
  waits: Buffer | null;
}

/**
 * The percentiles of SQLite's sorted waits; the summary's from every group's waits together. null
 * when the rows held more than `exactWaits` workloads: the read stopped short of the filter's.
 */
export function percentilesOfSorted(
  rows: readonly SortedWaitsRow[],
  options: PercentileOptions & { exactWaits: number },
): QueuePercentiles | null {
  if (rows.reduce((sum, row) => sum + row.n, 0) > options.exactWaits) return null;
  const sorted = rows.filter((row) => row.waits !== null).map((row) => ({ key: row.key, waits: asFloats(row.waits as Buffer) }));
  const pick = (waits: Float64Array) => options.percentiles.map((p) => seconds(waits[nearestRank(p, waits.length) - 1] as number));
  const all = sorted.length === 1 ? (sorted[0]?.waits as Float64Array) : concatSorted(sorted.map((group) => group.waits));
  return {
    exact: true,
    summary: all.length === 0 ? options.percentiles.map(() => null) : pick(all),
    groups: options.groupBy === null ? [] : sorted.map((group) => ({ key: group.key, values: pick(group.waits) })),
  };
}

/**
 * PostgreSQL: the waits at the asked ranks, per group (key) and overall (key NULL), over at most
 * `read` workloads of the filter.
 */
export function rankedWaitsQuery(d: SqlDialect, filter: WorkloadFilter, options: PercentileOptions, now: number, read: number): SqlWhere {
  const where = whereOf(d, filter);
  // ⌈p × n / 100⌉ in integers, as nearestRank takes it.
  const atRank = options.percentiles.map((p) => `r.rn = (${p} * r.n + 99) / 100`).join(' OR ');
  const ranked = (partition: string) =>
    `SELECT ${partition === '' ? 'NULL' : partition} AS key, r.rn, r.n, r.wait FROM (
       SELECT w.wait, w.key, ROW_NUMBER() OVER (${partition === '' ? '' : 'PARTITION BY w.key '}ORDER BY w.wait) AS rn,
         COUNT(*) OVER (${partition === '' ? '' : 'PARTITION BY w.key'}) AS n
       FROM waits w) AS r WHERE ${atRank}`;
  const key = options.groupBy === null ? "''" : GROUP_COLUMNS[options.groupBy];
  return {
    sql: `WITH waits AS (SELECT ${key} AS key, ${queueMsSql(d)} AS wait FROM workloads w WHERE ${where.sql} LIMIT @read)
      ${ranked('')}${options.groupBy === null ? '' : ` UNION ALL ${ranked('r.key')}`}`,
    params: { ...where.params, now, read },
  };
}

export interface RankedWaitRow {
  key: string | null;
  rn: number;
  n: number;
  wait: number;
}

/**
 * The percentiles from PostgreSQL's rows at the asked ranks. null when the rows ranked more than
 * `exactWaits` workloads: the read stopped short of the filter's.
 */
export function percentilesOfRanked(
  rows: readonly RankedWaitRow[],
  options: PercentileOptions & { exactWaits: number },
): QueuePercentiles | null {
  if (rows.some((row) => row.key === null && Number(row.n) > options.exactWaits)) return null;
  const byKey = new Map<string | null, RankedWaitRow[]>();
  for (const row of rows) byKey.set(row.key, [...(byKey.get(row.key) ?? []), row]);
  const pick = (found: readonly RankedWaitRow[]) =>
    options.percentiles.map((p) => {
      const row = found.find((r) => Number(r.rn) === nearestRank(p, Number(r.n)));
      return row === undefined ? null : seconds(Number(row.wait));
    });
  const groups = [...byKey]
    .filter(([key]) => key !== null)
    .map(([key, found]) => ({ key: key as string, values: pick(found) as number[] }));
  return { exact: true, summary: pick(byKey.get(null) ?? []), groups: options.groupBy === null ? [] : groups };
}

/** SQLite: every group's wait buckets from one pass of the aggregate, which neither sorts nor keeps the rows. */
export function sqliteWaitBucketsQuery(filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): SqlWhere {
  const where = whereOf(SQLITE, filter);
  const key = groupBy === null ? "''" : GROUP_COLUMNS[groupBy];
  return {
    sql: `SELECT ${WAIT_BUCKETS}(${key}, ${queueMsSql(SQLITE)}) AS buckets FROM workloads w WHERE ${where.sql}`,
    params: { ...where.params, now },
  };
}

export interface SqliteWaitBucketsRow {
  /** JSON [key, bucket, n, low] rows; NULL when no row matched. */
  buckets: string | null;
}

export function waitBucketsOfSqlite(row: SqliteWaitBucketsRow | undefined): WaitBucketRow[] {
  const rows = row?.buckets === null || row?.buckets === undefined ? [] : (JSON.parse(row.buckets) as [string, number, number, number][]);
  return rows.map(([key, bucket, n, low]) => ({ key, bucket, n, low }));
}

/** PostgreSQL: every group's wait buckets, grouped in SQL (a hash of groups × buckets, not of rows). */
export function waitBucketsQuery(d: SqlDialect, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): SqlWhere {
  const where = whereOf(d, filter);
  const key = groupBy === null ? "''" : GROUP_COLUMNS[groupBy];
  return {
    sql: `SELECT b.key, b.bucket, COUNT(*) AS n, MIN(b.s) AS low FROM (
        SELECT x.key, x.s, ${waitBucketSql('x.s')} AS bucket FROM (
          SELECT ${key} AS key, ${queueMsSql(d)} / 1000 AS s FROM workloads w WHERE ${where.sql}) AS x) AS b
      GROUP BY b.key, b.bucket`,
    params: { ...where.params, now },
  };
}

/** The percentiles from every group's wait buckets; the summary's from all of them together. */
export function percentilesOfBuckets(rows: readonly WaitBucketRow[], options: PercentileOptions): QueuePercentiles {
  const groups = new WaitBuckets();
  const all = new WaitBuckets();
  for (const row of rows) {
    const counted = { bucket: Number(row.bucket), n: Number(row.n), low: Number(row.low) };
    groups.merge({ key: row.key, ...counted });
    all.merge({ key: '', ...counted });
  }
  return {
    exact: false,
    summary: all.percentiles('', options.percentiles),
    groups: options.groupBy === null
      ? []
      : groups.keys().map((key) => ({ key, values: groups.percentiles(key, options.percentiles) as number[] })),
  };
}

/** Whole seconds, as a workload's queue_seconds (row-mapping.ts): floor is monotonic, so the rank holds. */
const seconds = (ms: number): number => Math.floor(ms / 1000);

function asFloats(blob: Buffer): Float64Array {
  // A copy: the blob's bytes need not be 8-byte aligned inside Node's buffer pool.
  const copy = new Uint8Array(blob);
  return new Float64Array(copy.buffer, 0, copy.byteLength / 8);
}

function concatSorted(parts: readonly Float64Array[]): Float64Array {
  const all = new Float64Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return all.sort();
}
