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
import { nearestRank, type Percentile } from '../../domain/percentiles.js';
import type { QueuePercentiles, StatsGroupKey, WorkloadFilter } from '../../query/ports.js';
import { SQLITE, type SqlDialect } from '../sql/dialect.js';
import { GROUP_COLUMNS } from './group-columns.js';
import { queueMsSql, whereOf, type SqlWhere } from '../sql/workload-sql.js';

/** The SQLite aggregate of a group's waits: a blob of float64s, ascending. */
export const SORTED_WAITS = 'gpucap_sorted_waits';

export type PercentileOptions = { groupBy: StatsGroupKey | null; percentiles: readonly Percentile[] };

/** SQLite: each group's waits, sorted (one row with key '' without groupBy). */
export function sortedWaitsQuery(filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): SqlWhere {
  const where = whereOf(SQLITE, filter);
  const key = groupBy === null ? "''" : GROUP_COLUMNS[groupBy];
  const grouped = groupBy === null ? '' : ' GROUP BY 1';
  return {
    sql: `SELECT ${key} AS key, ${SORTED_WAITS}(${queueMsSql(SQLITE)}) AS waits FROM workloads w WHERE ${where.sql}${grouped}`,
    params: { ...where.params, now },
  };
}

export interface SortedWaitsRow {
  key: string;
  /** NULL when no row matched (an aggregate without GROUP BY still returns its one row). */
  waits: Buffer | null;
}

/** The percentiles of SQLite's sorted waits; the summary's from every group's waits together. */
export function percentilesOfSorted(rows: readonly SortedWaitsRow[], options: PercentileOptions): QueuePercentiles {
  const sorted = rows.filter((row) => row.waits !== null).map((row) => ({ key: row.key, waits: asFloats(row.waits as Buffer) }));
  const pick = (waits: Float64Array) => options.percentiles.map((p) => seconds(waits[nearestRank(p, waits.length) - 1] as number));
  const all = sorted.length === 1 ? (sorted[0]?.waits as Float64Array) : concatSorted(sorted.map((group) => group.waits));
  return {
    summary: all.length === 0 ? options.percentiles.map(() => null) : pick(all),
    groups: options.groupBy === null ? [] : sorted.map((group) => ({ key: group.key, values: pick(group.waits) })),
  };
}

/** PostgreSQL: the waits at the asked ranks, per group (key) and overall (key NULL). */
export function rankedWaitsQuery(d: SqlDialect, filter: WorkloadFilter, options: PercentileOptions, now: number): SqlWhere {
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
    sql: `WITH waits AS (SELECT ${key} AS key, ${queueMsSql(d)} AS wait FROM workloads w WHERE ${where.sql})
      ${ranked('')}${options.groupBy === null ? '' : ` UNION ALL ${ranked('r.key')}`}`,
    params: { ...where.params, now },
  };
}

export interface RankedWaitRow {
  key: string | null;
  rn: number;
  n: number;
  wait: number;
}

/** The percentiles from PostgreSQL's rows at the asked ranks. */
export function percentilesOfRanked(rows: readonly RankedWaitRow[], options: PercentileOptions): QueuePercentiles {
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
  return { summary: pick(byKey.get(null) ?? []), groups: options.groupBy === null ? [] : groups };
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
