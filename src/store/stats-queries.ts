// Aggregates over the workloads of a filter: statistics (summary and groups) and the GPU-hours ranking.
// Running workloads are read at `now`, finished ones at their completion (GPU_HOURS_SQL, DURATION_SQL).
import type { GpuHoursRanking, StatsFigures, StatsGroupKey, StatsResult, WorkloadFilter } from '../query/ports.js';
import { DURATION_SQL, GPU_HOURS_SQL, whereOf, type StatementCache } from './workload-sql.js';

// The group key is spliced into SQL, so it comes from this closed map, never from the caller.
const GROUP_COLUMNS: Record<StatsGroupKey, string> = {
  submitted_by: 'w.submitted_by',
  initiative_id: 'w.initiative_id',
  instance_type: 'w.instance_type',
};

// Sums rather than averages, so that the summary can be added up from the groups (one pass over the
// rows instead of two). DURATION_SQL is NULL exactly when started_at is.
const FIGURES_SELECT = `
  COUNT(*) AS workload_count,
  TOTAL(${GPU_HOURS_SQL}) AS gpu_hours,
  TOTAL(${DURATION_SQL}) AS duration_sum,
  COUNT(w.started_at) AS started,
  TOTAL(w.status = 'completed') AS completed,
  TOTAL(w.status = 'failed') AS failed`;

interface FiguresRow {
  workload_count: number;
  gpu_hours: number;
  duration_sum: number;
  started: number;
  completed: number;
  failed: number;
}

const FIGURE_KEYS = ['workload_count', 'gpu_hours', 'duration_sum', 'started', 'completed', 'failed'] as const;

export function workloadStats(
  statements: StatementCache,
  filter: WorkloadFilter,
  groupBy: StatsGroupKey | null,
  now: number,
): StatsResult {
  const where = whereOf(filter);
  const params = { ...where.params, now };
  if (groupBy === null) {
    const summary = statements.get(`SELECT ${FIGURES_SELECT} FROM workloads w WHERE ${where.sql}`).get(params) as FiguresRow;
    return { summary: toFigures(summary), groups: [] };
  }
  const column = GROUP_COLUMNS[groupBy];
  const rows = statements
    .get(
      `SELECT ${column} AS key, ${FIGURES_SELECT} FROM workloads w WHERE ${where.sql}
       GROUP BY ${column} ORDER BY gpu_hours DESC, key ASC`,
    )
    .all(params) as (FiguresRow & { key: string })[];
  const summary: FiguresRow = { workload_count: 0, gpu_hours: 0, duration_sum: 0, started: 0, completed: 0, failed: 0 };
  for (const row of rows) for (const key of FIGURE_KEYS) summary[key] += row[key];
  return { summary: toFigures(summary), groups: rows.map((row) => ({ key: row.key, ...toFigures(row) })) };
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

export function rankByGpuHours(
  statements: StatementCache,
  filter: WorkloadFilter,
  options: { order: 'asc' | 'desc'; limit: number; now: number },
): GpuHoursRanking {
  const where = whereOf(filter);
  const params = { ...where.params, now: options.now };
  // Ties go to the smaller workload_id in both orders, so a ranking is stable between calls.
  // The top rows are picked on workloads_org_submitted alone (it covers every column of the
  // expression); only the `limit` winners are then read from the table for their names.
  const direction = options.order === 'asc' ? 'ASC' : 'DESC';
  const rows = statements
    .get(
      `SELECT w.workload_id, w.name, w.initiative_id, top.gpu_hours
       FROM (SELECT w.rowid AS id, w.workload_id AS workload_id, ${GPU_HOURS_SQL} AS gpu_hours FROM workloads w
             WHERE ${where.sql} ORDER BY gpu_hours ${direction}, w.workload_id ASC LIMIT @limit) AS top
       JOIN workloads w ON w.rowid = top.id
       ORDER BY top.gpu_hours ${direction}, top.workload_id ASC`,
    )
    .all({ ...params, limit: options.limit }) as { workload_id: string; name: string; initiative_id: string; gpu_hours: number }[];
  const overall = statements
    .get(`SELECT COUNT(*) AS n, AVG(${GPU_HOURS_SQL}) AS average FROM workloads w WHERE ${where.sql}`)
    .get(params) as { n: number; average: number | null };
  return {
    entries: rows.map((row) => ({ workloadId: row.workload_id, name: row.name, initiativeId: row.initiative_id, gpuHours: row.gpu_hours })),
    totalCount: overall.n,
    average: overall.average,
  };
}
