// Statistics (summary and groups) over the workloads of a filter. Running workloads are read at
// `now`, finished ones at their completion (gpuMsSql, DURATION_MS_SQL). The daily rollups answer
// every filter the API sends (stats-rollup.ts); the query over the rows remains for the others and
// gives the same figures to the last bit.
import type { StatsFigures, StatsGroupKey, StatsResult, WorkloadFilter } from '../../query/ports.js';
import { rollupsHold } from './rollup-sql.js';
import { rollupStatsRows, type FiguresRow } from './stats-rollup.js';
import { DURATION_MS_SQL, gpuMsSql, whereOf, type StatementCache } from './workload-sql.js';

// The group key is spliced into SQL, so it comes from this closed map, never from the caller.
const GROUP_COLUMNS: Record<StatsGroupKey, string> = {
  submitted_by: 'w.submitted_by',
  initiative_id: 'w.initiative_id',
  instance_type: 'w.instance_type',
};

// Sums rather than averages, so that the summary can be added up from the groups (one pass over the
// rows instead of two). DURATION_MS_SQL is NULL exactly when started_at is.
const FIGURES_SELECT = `
  COUNT(*) AS workload_count,
  TOTAL(${gpuMsSql('@now')}) / 3600000.0 AS gpu_hours,
  TOTAL(${DURATION_MS_SQL}) / 1000.0 AS duration_sum,
  COUNT(w.started_at) AS started,
  TOTAL(w.status = 'completed') AS completed,
  TOTAL(w.status = 'failed') AS failed`;

const FIGURE_KEYS = ['workload_count', 'gpu_hours', 'duration_sum', 'started', 'completed', 'failed'] as const;

export function workloadStats(
  statements: StatementCache,
  filter: WorkloadFilter,
  groupBy: StatsGroupKey | null,
  now: number,
): StatsResult {
  const rows = rollupsHold(filter, { times: true }) ? rollupStatsRows(statements, filter, groupBy, now) : rawStatsRows(statements, filter, groupBy, now);
  if (groupBy === null) return { summary: toFigures(rows[0] ?? emptyFigures()), groups: [] };
  const summary = emptyFigures();
  for (const row of rows) for (const key of FIGURE_KEYS) summary[key] += row[key];
  return { summary: toFigures(summary), groups: rows.map((row) => ({ key: row.key ?? '', ...toFigures(row) })) };
}

/** The statistics query over the rows of the filter (the covering list index workloads_org_submitted). */
export function rawStatsRows(statements: StatementCache, filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): (FiguresRow & { key?: string })[] {
  const where = whereOf(filter);
  const params = { ...where.params, now };
  if (groupBy === null) return statements.get(`SELECT ${FIGURES_SELECT} FROM workloads w WHERE ${where.sql}`).all(params) as FiguresRow[];
  const column = GROUP_COLUMNS[groupBy];
  return statements
    .get(
      `SELECT ${column} AS key, ${FIGURES_SELECT} FROM workloads w WHERE ${where.sql}
       GROUP BY ${column} ORDER BY gpu_hours DESC, key ASC`,
    )
    .all(params) as (FiguresRow & { key: string })[];
}

function emptyFigures(): FiguresRow {
  return { workload_count: 0, gpu_hours: 0, duration_sum: 0, started: 0, completed: 0, failed: 0 };
}

function toFigures(row: FiguresRow): StatsFigures {
  const decided = row.completed + row.failed;
  return {
    workloadCount: row.workload_count,
    gpuHours: row.gpu_hours,
    averageDurationSeconds: row.started === 0 ? 0 : row.duration_sum / row.started,
    successRate: decided === 0 ? 0 : row.completed / decided,
  };
}
