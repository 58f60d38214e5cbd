// Statistics from the daily rollups (stats_daily_*): whole days from the rollup, the partial first
// and last days corrected from the rows (day-window.ts), and the floors of the rare unfinished rows
// that read below 0 added back. The figures are those of the query over the rows (stats-queries.ts)
// to the last bit: every part is a sum of whole ms and GPU-ms.
import type { StatsGroupKey, WorkloadFilter } from '../../query/ports.js';
import { planDays } from '../day-window.js';
import {
  belowZeroAt, DAILY_DURATION_MS, DAILY_GPU_MS, durationMsFloorAt, gpuMsFloorAt, HORIZON_INDEX, openGpuMs,
} from './rollup-sql.js';
import { scopeWhere, whereOf, type SqlParams, type StatementCache } from './workload-sql.js';

/** Figures as sums, so that groups add up to the summary. */
export interface FiguresRow {
  workload_count: number;
  gpu_hours: number;
  duration_sum: number;
  started: number;
  completed: number;
  failed: number;
}

// Both group by instance type and by initiative read the instance-type rollup, which has the
// initiative too (a few times more rows than initiatives alone, one table fewer to keep up).
const SOURCES: Record<StatsGroupKey | 'none', { table: string; key: string }> = {
  none: { table: 'stats_daily_instance_type', key: 'instance_type' },
  submitted_by: { table: 'stats_daily_submitter', key: 'submitted_by' },
  initiative_id: { table: 'stats_daily_instance_type', key: 'initiative_id' },
  instance_type: { table: 'stats_daily_instance_type', key: 'instance_type' },
};

// A row of the raw ranges, linear in @now like a rollup's: floors come from the correction part.
const RAW_GPU_MS = `(CASE WHEN w.completed_at IS NOT NULL THEN MAX(0.0, ${openGpuMs('w.completed_at')}) ELSE ${openGpuMs('@now')} END)`;
const RAW_DURATION_MS =
  '(CASE WHEN w.started_at IS NULL THEN 0 WHEN w.completed_at IS NOT NULL THEN MAX(0, w.completed_at - w.started_at) ELSE @now - w.started_at END)';

/** Rows like the query over the rows gives: one per group (sorted), or the one summary row. */
export function rollupStatsRows(statements: StatementCache, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): (FiguresRow & { key?: string })[] {
  const source = SOURCES[groupBy ?? 'none'];
  const plan = planDays({ from: filter.submittedFrom, before: filter.submittedBefore }, now);
  const rollupScope = scopeWhere(filter, 'r');
  const rowScope = scopeWhere(filter, 'w');
  const window = whereOf(filter);
  const params: SqlParams = { ...window.params, now, firstDay: plan.firstDay, lastDay: plan.lastDay };
  // Two raw ranges always, an unused one empty: one SQL text whatever the window.
  for (const [i, range] of [0, 1].map((n) => [n, plan.ranges[n] ?? { from: 0, to: 0, sign: 1 }] as const)) {
    Object.assign(params, { [`from${i}`]: range.from, [`to${i}`]: range.to, [`sign${i}`]: range.sign });
  }
  const key = groupBy === null ? 'NULL' : `r.${source.key}`;
  const rowKey = groupBy === null ? 'NULL' : `w.${source.key}`;
  const raw = (i: number) => `
    SELECT ${rowKey}, @sign${i}, @sign${i} * (w.status = 'completed'), @sign${i} * (w.status = 'failed'),
      @sign${i} * (w.started_at IS NOT NULL), @sign${i} * ${RAW_DURATION_MS}, @sign${i} * ${RAW_GPU_MS}
    FROM workloads w WHERE ${rowScope.sql} AND w.submitted_at >= @from${i} AND w.submitted_at < @to${i}`;
  const parts = `
    SELECT ${key} AS key, r.workloads, r.completed, r.failed, r.started, ${DAILY_DURATION_MS} AS duration_ms, ${DAILY_GPU_MS} AS gpu_ms
    FROM ${source.table} r WHERE ${rollupScope.sql} AND r.day >= @firstDay AND r.day <= @lastDay
    UNION ALL ${raw(0)}
    UNION ALL ${raw(1)}
    UNION ALL
    SELECT ${rowKey}, 0, 0, 0, 0, ${durationMsFloorAt('@now')}, ${gpuMsFloorAt('@now')}
    FROM workloads w INDEXED BY ${HORIZON_INDEX} WHERE ${window.sql} AND ${belowZeroAt('@now')}`;
  const figures = `
    COALESCE(SUM(workloads), 0) AS workload_count, TOTAL(gpu_ms) / 3600000.0 AS gpu_hours, TOTAL(duration_ms) / 1000.0 AS duration_sum,
    COALESCE(SUM(started), 0) AS started, COALESCE(SUM(completed), 0) AS completed, COALESCE(SUM(failed), 0) AS failed`;
  const sql = groupBy === null
    ? `SELECT ${figures} FROM (${parts})`
    : `SELECT key, ${figures} FROM (${parts}) GROUP BY key HAVING SUM(workloads) > 0 ORDER BY gpu_hours DESC, key ASC`;
  return statements.get(sql).all(params) as (FiguresRow & { key?: string })[];
}
