// Statistics from the daily rollups (stats_daily_*): whole days from the rollup, the partial first
// and last days corrected from the rows (day-window.ts), and the floors of the rare unfinished rows
// that read below 0 added back. The figures are those of the query over the rows (stats-queries.ts)
// to the last bit: every part is a sum of whole ms and GPU-ms.
import type { TrendInterval } from '../../domain/trend-interval.js';
import type { StatsGroupKey, WorkloadFilter } from '../../query/ports.js';
import { planDays } from './day-window.js';
import type { SqlDialect, SqlParams } from '../sql/dialect.js';
import {
  belowZeroAt, dailyDurationMs, dailyGpuMs, dailyQueueMs, durationMsFloorAt, gpuMsFloorAt, HORIZON_INDEX, linearQueueMs, openGpuMs,
  STILL_WAITING,
} from '../sql/rollup-sql.js';
import { GROUP_COLUMNS } from './group-columns.js';
import { intervalSql } from './trend-period.js';
import { USAGE_JOIN, usageSums } from '../sql/usage-join.js';
import { USAGE_VALUES } from '../usage/usage-columns.js';
import { planWeeks } from './week-window.js';
import { scopeWhere, whereOf, type SqlWhere } from '../sql/workload-sql.js';

// The summary and the groups by initiative read the initiatives' rollup (schema v10), the groups by
// instance type the instance-type rollup, which has the initiative too for team scopes.
// The failure reasons' rollup holds only failed and cancelled rows: the group without a reason ('')
// is the whole (the initiatives' rollup) minus it. Every figure is an integer-valued sum, so the
// difference is exact. Usage has rollups shaped like these ('' for no failure reason).
// The groups by submitter, a row per team and user each day, read whole weeks from the weekly
// rollups (schema v11) unless the series is by day.
interface Source {
  table: string;
  key: string;
  usage: string;
  restOf?: string;
  weekly?: { table: string; usage: string };
}
/** The rollup of each grouping the rollups hold (group-columns.ts, rollupsGroupBy). */
const SOURCES: Record<Exclude<StatsGroupKey, 'gpu_model'> | 'none', Source> = {
  none: { table: 'stats_daily_initiative', key: 'initiative_id', usage: 'stats_daily_usage_initiative' },
  submitted_by: {
    table: 'stats_daily_submitter', key: 'submitted_by', usage: 'stats_daily_usage_submitter',
    weekly: { table: 'stats_weekly_submitter', usage: 'stats_weekly_usage_submitter' },
  },
  initiative_id: { table: 'stats_daily_initiative', key: 'initiative_id', usage: 'stats_daily_usage_initiative' },
  instance_type: { table: 'stats_daily_instance_type', key: 'instance_type', usage: 'stats_daily_usage' },
  failure_reason: {
    table: 'stats_daily_failure_reason', key: 'failure_reason', usage: 'stats_daily_usage', restOf: 'stats_daily_initiative',
  },
};

/** The intervals a series from the rollups has: whole days or weeks. */
type RollupInterval = Exclude<TrendInterval, 'hour'>;

/** Past any time a row can hold (JavaScript's last date), exact as a bound parameter. */
const LAST_MS = 8.64e15;

// A row of the raw ranges, linear in @now like a rollup's: floors come from the correction part.
const rawGpuMs = (d: SqlDialect) => {
  const atCompletion = d.greatest(d.float('0.0'), openGpuMs(d, 'w.completed_at'));
  return `(CASE WHEN w.completed_at IS NOT NULL THEN ${atCompletion} ELSE ${openGpuMs(d, '@now')} END)`;
};
const rawDurationMs = (d: SqlDialect) => {
  const ran = d.greatest('0', 'w.completed_at - w.started_at');
  return `(CASE WHEN w.started_at IS NULL THEN 0 WHEN w.completed_at IS NOT NULL THEN ${ran} ELSE @now - w.started_at END)`;
};

/** What every part of the statistics' union is built from. */
interface Parts {
  d: SqlDialect;
  source: Source;
  /** The group key of a rollup part, of a usage part and of a row part (NULL without groups). */
  key: string;
  usageKey: string;
  rowKey: string;
  /** `… AS period, ` of a rollup part and of a row part; nothing without an interval. */
  period: string;
  rowPeriod: string;
  /** Each part sums its own rows per group (and period) before the union. */
  grouped: string;
  /** The rollup rows of the whole days, and the scopes of rollup and row parts. */
  days: string;
  rollupScope: SqlWhere;
  rowScope: SqlWhere;
  window: SqlWhere;
}

const NAMES = ['workloads', 'completed', 'failed', 'started', 'duration_ms', 'gpu_ms', 'queue_ms', ...USAGE_VALUES];
const NO_USAGE = USAGE_VALUES.map(() => '0');
const NO_FIGURES = ['0', '0', '0', '0', '0', '0', '0'];
const sum = (v: string): string => `SUM(${v})`;
const named = (values: readonly string[]): string[] => values.map((v, i) => `${v} AS ${NAMES[i]}`);

/** One part of the union: `values` of `from`, summed per group (and period) where the statistics have them. */
const part = (p: Parts, keyOf: string, periodOf: string, values: readonly string[], from: string): string =>
  `SELECT ${keyOf}, ${periodOf}${values.join(', ')} FROM ${from} ${p.grouped}`;

/** A rollup's figures, each `of` the row's value times `sign`. */
const dailyFigures = (d: SqlDialect, sign: string, of = sum): string[] => [
  of(`${sign}r.workloads`), of(`${sign}r.completed`), of(`${sign}r.failed`), of(`${sign}r.started`), of(`${sign}(${dailyDurationMs(d)})`),
  of(`${sign}(${dailyGpuMs(d)})`), of(`${sign}(${dailyQueueMs(d)})`),
];
const usageFigures = (sign: string, of = sum): string[] => USAGE_VALUES.map((v) => of(`${sign}r.${v}`));

/**
 * The parameters of the window: the whole days, the two raw ranges (an unused one empty: one SQL text
 * whatever the window), the waiting rows.
 */
function windowParams(filter: WorkloadFilter, window: SqlWhere, plan: ReturnType<typeof planDays>, now: number): SqlParams {
  const params: SqlParams = { ...window.params, now, firstDay: plan.firstDay, lastDay: plan.lastDay };
  for (const [i, range] of [0, 1].map((n) => [n, plan.ranges[n] ?? { from: 0, to: 0, sign: 1 }] as const)) {
    Object.assign(params, { [`from${i}`]: range.from, [`to${i}`]: range.to, [`sign${i}`]: range.sign });
  }
  // The rows still waiting that were submitted after now, in one range of the list index: with the
  // window's own lower bound beside `> now`, SQLite would range over one of the two only (the month).
  Object.assign(params, { waitFrom: Math.max(filter.submittedFrom ?? now + 1, now + 1), waitBefore: filter.submittedBefore ?? LAST_MS });
  return params;
}

/** The whole days from the daily rollups, the failure reasons' rest, and their usage. */
function dailyParts(p: Parts): string {
  const { d, source, days } = p;
  const rest = source.restOf === undefined ? '' : `
    UNION ALL ${part(p, "''", p.period, [...dailyFigures(d, ''), ...NO_USAGE], `${source.restOf} r WHERE ${days}`)}
    UNION ALL ${part(p, "''", p.period, [...dailyFigures(d, '-'), ...NO_USAGE], `${source.table} r WHERE ${days}`)}`;
  return `
    ${part(p, `${p.key} AS key`, p.period, named([...dailyFigures(d, ''), ...NO_USAGE]), `${source.table} r WHERE ${days}`)}${rest}
    UNION ALL ${part(p, p.usageKey, p.period, [...NO_FIGURES, ...usageFigures('')], `${source.usage} r WHERE ${days}`)}`;
}

/** Whole weeks from the weekly rollups, each edge's days added or subtracted from the daily ones. */
function weeklyParts(
  p: Parts,
  options: {
    weekly: NonNullable<Source['weekly']>;
    interval: RollupInterval | undefined;
    plan: ReturnType<typeof planDays>;
    now: number;
    params: SqlParams;
  },
): string {
  const { d, source } = p;
  const { weekly, interval, params } = options;
  const weeks = planWeeks(options.plan.firstDay, options.plan.lastDay, options.now);
  Object.assign(params, { weekFrom: weeks.weekFrom, weekTo: weeks.weekTo });
  weeks.days.forEach((range, i) =>
    Object.assign(params, { [`dayFrom${i}`]: range.fromDay, [`dayTo${i}`]: range.toDay, [`daySign${i}`]: range.sign }));
  const inWeeks = `${p.rollupScope.sql} AND r.day >= @weekFrom AND r.day <= @weekTo`;
  const inDays = (i: number) => `${p.rollupScope.sql} AND r.day >= @dayFrom${i} AND r.day <= @dayTo${i}`;
  // A series by week has about one weekly row per entry: summing them per part first would only
  // add a sort (15 % of a month by week and submitter at 1M rows); the union's sums do it.
  const weeklyPart = interval === 'week'
    ? (keyOf: string, values: readonly string[], from: string) => `SELECT ${keyOf}, ${p.period}${values.join(', ')} FROM ${from}`
    : (keyOf: string, values: readonly string[], from: string) => part(p, keyOf, p.period, values, from);
  const of = interval === 'week' ? (v: string) => v : sum;
  const edgeDays = (i: number) => {
    const sign = `@daySign${i} * `;
    return `
    UNION ALL ${part(p, p.key, p.period, [...dailyFigures(d, sign), ...NO_USAGE], `${source.table} r WHERE ${inDays(i)}`)}
    UNION ALL ${part(p, p.usageKey, p.period, [...NO_FIGURES, ...usageFigures(sign)], `${source.usage} r WHERE ${inDays(i)}`)}`;
  };
  const weeklyFigures =
    weeklyPart(`${p.key} AS key`, named([...dailyFigures(d, '', of), ...NO_USAGE]), `${weekly.table} r WHERE ${inWeeks}`);
  const weeklyUsage = weeklyPart(p.usageKey, [...NO_FIGURES, ...usageFigures('', of)], `${weekly.usage} r WHERE ${inWeeks}`);
  return `
    ${weeklyFigures}
    UNION ALL ${weeklyUsage}${edgeDays(0)}${edgeDays(1)}`;
}

/** The partial days from the rows, the floors of the rows that read below 0, and the waiting rows submitted after now. */
function rowParts(p: Parts): string {
  const { d } = p;
  // The count times the sign: PostgreSQL cannot choose a SUM for a bare parameter.
  const rawValues = (i: number) => [
    `COUNT(*) * @sign${i}`,
    sum(`@sign${i} * (${d.asInt("w.status = 'completed'")})`),
    sum(`@sign${i} * (${d.asInt("w.status = 'failed'")})`),
    sum(`@sign${i} * (${d.asInt('w.started_at IS NOT NULL')})`),
    sum(`@sign${i} * ${rawDurationMs(d)}`),
    sum(`@sign${i} * ${rawGpuMs(d)}`),
    sum(`@sign${i} * ${linearQueueMs(d, '@now')}`),
    ...USAGE_VALUES.map((v) => sum(`@sign${i} * COALESCE(u.${v}, 0)`)),
  ];
  const raw = (i: number) => part(p, p.rowKey, p.rowPeriod, rawValues(i),
    `workloads w ${USAGE_JOIN} WHERE ${p.rowScope.sql} AND w.submitted_at >= @from${i} AND w.submitted_at < @to${i}`);
  const floors = ['0', '0', '0', '0', sum(durationMsFloorAt(d, '@now')), sum(gpuMsFloorAt(d, '@now')), '0', ...NO_USAGE];
  const waiting = ['0', '0', '0', '0', '0', '0', sum('w.submitted_at - @now'), ...NO_USAGE];
  return `
    UNION ALL ${raw(0)}
    UNION ALL ${raw(1)}
    UNION ALL ${part(p, p.rowKey, p.rowPeriod, floors,
      `workloads w${d.indexedBy(HORIZON_INDEX)} WHERE ${p.window.sql} AND ${belowZeroAt(d, '@now')}`)}
    UNION ALL ${part(p, p.rowKey, p.rowPeriod, waiting,
      `workloads w WHERE ${p.rowScope.sql} AND w.submitted_at >= @waitFrom AND w.submitted_at < @waitBefore AND ${STILL_WAITING}`)}`;
}

/** The figures of the union's rows, per group and period, as FiguresRow names them. */
function statsSelect(
  d: SqlDialect,
  parts: string,
  options: { groupBy: StatsGroupKey | null; interval: RollupInterval | undefined },
): string {
  const gpuHours = `${d.total('gpu_ms')} / ${d.float('3600000.0')}`;
  const durationSum = `${d.total('duration_ms')} / ${d.float('1000.0')}`;
  const figures = `
    ${d.sumInt('workloads')} AS workload_count, ${gpuHours} AS gpu_hours, ${durationSum} AS duration_sum,
    ${d.sumInt('started')} AS started, ${d.sumInt('completed')} AS completed, ${d.sumInt('failed')} AS failed,
    ${d.total('queue_ms')} / ${d.float('1000.0')} AS queue_sum, ${usageSums(d)}`;
  const from = `FROM (${parts})${d.subqueryAlias('parts')}`;
  if (options.interval !== undefined) {
    return `SELECT period, key, ${figures} ${from} GROUP BY period, key HAVING SUM(workloads) > 0 ORDER BY period, gpu_hours DESC, key ASC`;
  }
  return options.groupBy === null
    ? `SELECT ${figures} ${from}`
    : `SELECT key, ${figures} ${from} GROUP BY key HAVING SUM(workloads) > 0 ORDER BY gpu_hours DESC, key ASC`;
}

/**
 * The query giving rows like the query over the rows gives (FiguresRow, stats-queries.ts): one per
 * group (sorted), or the one summary row; with an interval (day or week), one per interval and group
 * that holds a workload, each part counted in the interval of its day of submission.
 */
export function rollupStatsQuery(
  d: SqlDialect,
  filter: WorkloadFilter,
  options: { groupBy: StatsGroupKey | null; now: number; interval?: RollupInterval },
): SqlWhere {
  const { groupBy, now, interval } = options;
  if (groupBy === 'gpu_model') throw new Error('The rollups hold no GPU model: its statistics are summed from the rows');
  const source = SOURCES[groupBy ?? 'none'];
  const plan = planDays({ from: filter.submittedFrom, before: filter.submittedBefore }, now);
  const rollupScope = scopeWhere(d, filter, 'r');
  const window = whereOf(d, filter);
  const params = windowParams(filter, window, plan, now);
  const p: Parts = {
    d,
    source,
    key: groupBy === null ? 'NULL' : `r.${source.key}`,
    usageKey: groupBy === null ? 'NULL' : `r.${groupBy}`,
    rowKey: groupBy === null ? 'NULL' : GROUP_COLUMNS[groupBy],
    // Without an interval, no part selects a period.
    period: interval === undefined ? '' : `${intervalSql(interval, { day: 'r.day' })} AS period, `,
    rowPeriod: interval === undefined ? '' : `${intervalSql(interval, { ms: 'w.submitted_at' })}, `,
    // Each part sums its own rows per group (and period) before the union: the union's sort and sums
    // then see a few rows per group, not every rollup row with every column of every other part.
    grouped: interval !== undefined ? 'GROUP BY 1, 2' : groupBy === null ? '' : 'GROUP BY 1',
    days: `${rollupScope.sql} AND r.day >= @firstDay AND r.day <= @lastDay`,
    rollupScope,
    rowScope: scopeWhere(d, filter, 'w'),
    window,
  };
  const weekly = interval === 'day' ? undefined : source.weekly;
  const rollupParts = weekly === undefined ? dailyParts(p) : weeklyParts(p, { weekly, interval, plan, now, params });
  return { sql: statsSelect(d, `${rollupParts}${rowParts(p)}`, { groupBy, interval }), params };
}
