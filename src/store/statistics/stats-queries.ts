// Statistics (summary and groups) over the workloads of a filter. Running workloads are read at
// `now`, finished ones at their completion (gpuMsSql, durationMsSql). The daily rollups answer
// every filter the API sends (stats-rollup.ts); the query over the rows remains for the others and
// gives the same figures to the last bit. Each backend runs the one query and hands its rows to
// statsResult.
import type { TrendInterval } from '../../domain/trend-interval.js';
import { intervalStart } from '../../domain/trend-interval.js';
import type { StatsFigures, StatsGroupKey, StatsResult, TrendEntry, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import { compareBinary } from '../rankings/gpu-hours-ranking.js';
import { rollupsHold } from '../sql/rollup-sql.js';
import { GROUP_COLUMNS, rollupsGroupBy } from './group-columns.js';
import { rollupStatsQuery } from './stats-rollup.js';
import { intervalSql } from './trend-period.js';
import { noUsageSums, USAGE_JOIN, usageFiguresOf, usageSums, type UsageSums } from '../sql/usage-join.js';
import { USAGE_VALUES } from '../usage/usage-columns.js';
import { durationMsSql, gpuMsSql, queueMsSql, whereOf, type SqlWhere } from '../sql/workload-sql.js';

/** Figures as sums, so that groups add up to the summary. */
export interface FiguresRow extends UsageSums {
  workload_count: number;
  gpu_hours: number;
  duration_sum: number;
  started: number;
  completed: number;
  failed: number;
  /** Seconds waited, summed over every workload counted. */
  queue_sum: number;
}

export type StatsRow = FiguresRow & { key?: string };

/** A row of a series: the interval's number (src/domain/trend-interval.ts), the group's key when grouped. */
export type TrendRow = FiguresRow & { period: number; key: string | null };


// Sums rather than averages, so that the summary can be added up from the groups (one pass over the
// rows instead of two). durationMsSql is NULL exactly when started_at is.
const figuresSelect = (d: SqlDialect) => `
  COUNT(*) AS workload_count,
  ${d.total(gpuMsSql(d, '@now'))} / ${d.float('3600000.0')} AS gpu_hours,
  ${d.total(durationMsSql(d))} / ${d.float('1000.0')} AS duration_sum,
  COUNT(w.started_at) AS started,
  ${d.total(d.asInt("w.status = 'completed'"))} AS completed,
  ${d.total(d.asInt("w.status = 'failed'"))} AS failed,
  ${d.total(queueMsSql(d))} / ${d.float('1000.0')} AS queue_sum,
  ${usageSums(d, 'u.')}`;

const FIGURE_KEYS = [
  'workload_count', 'gpu_hours', 'duration_sum', 'started', 'completed', 'failed', 'queue_sum', ...USAGE_VALUES,
] as const;

type TrendOptions = { groupBy: StatsGroupKey | null; now: number; interval: TrendInterval };

/** The statistics query: from the daily rollups when they hold the filter, else over the rows. */
export function statsQuery(d: SqlDialect, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; now: number }): SqlWhere {
  const fromRollups = rollupsGroupBy(options.groupBy) && rollupsHold(filter, { times: true });
  return fromRollups ? rollupStatsQuery(d, filter, options) : rawStatsQuery(d, filter, options);
}

/**
 * The series query (TrendRow): per interval of submission, and group, that holds a workload. Days and
 * weeks come from the daily rollups like the statistics; hours from the rows (the window is at most
 * 31 days, see workload-stats.ts).
 */
export function trendQuery(d: SqlDialect, filter: WorkloadFilter, options: TrendOptions): SqlWhere {
  const { interval } = options;
  if (interval !== 'hour' && rollupsGroupBy(options.groupBy) && rollupsHold(filter, { times: true })) {
    return rollupStatsQuery(d, filter, { ...options, interval });
  }
  return rawTrendQuery(d, filter, options);
}

/** The series query over the rows of the filter. */
export function rawTrendQuery(d: SqlDialect, filter: WorkloadFilter, options: TrendOptions): SqlWhere {
  const { interval } = options;
  const where = whereOf(d, filter);
  const period = intervalSql(interval, { ms: 'w.submitted_at' });
  const key = options.groupBy === null ? null : GROUP_COLUMNS[options.groupBy];
  return {
    sql: `SELECT ${period} AS period, ${key ?? 'NULL'} AS key, ${figuresSelect(d)} FROM workloads w ${USAGE_JOIN} WHERE ${where.sql}
       GROUP BY ${key === null ? period : `${period}, ${key}`} ORDER BY period, gpu_hours DESC, key ASC`,
    params: { ...where.params, now: options.now },
  };
}

/** The statistics query over the rows of the filter (the covering list index workloads_org_submitted). */
export function rawStatsQuery(d: SqlDialect, filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; now: number }): SqlWhere {
  const where = whereOf(d, filter);
  const params = { ...where.params, now: options.now };
  if (options.groupBy === null) return { sql: `SELECT ${figuresSelect(d)} FROM workloads w ${USAGE_JOIN} WHERE ${where.sql}`, params };
  const column = GROUP_COLUMNS[options.groupBy];
  return {
    sql: `SELECT ${column} AS key, ${figuresSelect(d)} FROM workloads w ${USAGE_JOIN} WHERE ${where.sql}
       GROUP BY ${column} ORDER BY gpu_hours DESC, key ASC`,
    params,
  };
}

/** The series from the rows of trendQuery. */
export function trendResult(rows: readonly TrendRow[], interval: TrendInterval): TrendEntry[] {
  return rows.map((row) => ({ start: intervalStart(interval, row.period), key: row.key, ...toFigures(row) }));
}

/** The statistics from the rows of either query. */
export function statsResult(rows: readonly StatsRow[], groupBy: StatsGroupKey | null): StatsResult {
  if (groupBy === null) return { summary: toFigures(rows[0] ?? emptyFigures()), groups: [] };
  const summary = emptyFigures();
  for (const row of rows) for (const key of FIGURE_KEYS) summary[key] += row[key];
  return { summary: toFigures(summary), groups: rows.map((row) => ({ key: row.key ?? '', ...toFigures(row) })) };
}

/**
 * The statistics a series adds up to, from the series' own rows: each group's figures are the sums of
 * its rows over the intervals, sorted as the statistics query sorts them. A request with an interval
 * reads one query instead of two, and its summary is Σ series by construction.
 */
export function statsOfTrendRows(rows: readonly TrendRow[], groupBy: StatsGroupKey | null): StatsResult {
  const byKey = new Map<string, StatsRow>();
  for (const row of rows) {
    const key = groupBy === null ? '' : (row.key ?? '');
    let sums = byKey.get(key);
    if (sums === undefined) {
      sums = { ...emptyFigures(), key };
      byKey.set(key, sums);
    }
    for (const figure of FIGURE_KEYS) sums[figure] += row[figure];
  }
  const groups = [...byKey.values()].sort((a, b) => b.gpu_hours - a.gpu_hours || compareBinary(a.key ?? '', b.key ?? ''));
  return statsResult(groups, groupBy);
}

function emptyFigures(): FiguresRow {
  return { workload_count: 0, gpu_hours: 0, duration_sum: 0, started: 0, completed: 0, failed: 0, queue_sum: 0, ...noUsageSums() };
}

export function toFigures(row: FiguresRow): StatsFigures {
  const decided = row.completed + row.failed;
  return {
    workloadCount: row.workload_count,
    gpuHours: row.gpu_hours,
    averageDurationSeconds: row.started === 0 ? 0 : row.duration_sum / row.started,
    successRate: decided === 0 ? 0 : row.completed / decided,
    averageQueueSeconds: row.workload_count === 0 ? 0 : row.queue_sum / row.workload_count,
    ...usageFiguresOf(row, row.gpu_hours),
  };
}
