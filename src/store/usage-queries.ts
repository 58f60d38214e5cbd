// GPU-hours consumed inside a window (capacity periods), from the pod intervals clipped to the window.
// Throughout, a pod ends at its finish, else at its workload's completion (as GPU_HOURS_SQL reads
// it), else it is still running and counts up to the window end. A workload never counts less than 0.
import type { UsageBreakdown, WorkloadFilter } from '../query/ports.js';
import { gpuSecondsSql, rawGpuSecondsSql, whereOf, type SqlWhere, type StatementCache } from './workload-sql.js';

interface UsageRow {
  initiative_id: string;
  instance_type: string;
  gpu_hours: number;
}

type Window = { from: number | null; to: number };

const POD_END = 'COALESCE(p.finished_at, w.completed_at, @windowTo)';

/**
 * The started pods whose time may reach past @bound (finished after it, or not finished), with
 * their workloads. Two ranges of workload_pods_finished joined by UNION ALL rather than an OR: SQLite
 * runs an OR as a rowid set and then reads the pods table, while each range alone reads only the
 * covering index. CROSS JOIN keeps SQLite driving from these pods (a slice of the history) instead
 * of from every workload of the organization.
 */
const PODS_REACHING = (bound: string, extra = '') => `(
    SELECT workload_id, gpus, started_at, finished_at FROM workload_pods
    WHERE finished_at > ${bound} AND started_at IS NOT NULL ${extra}
    UNION ALL
    SELECT workload_id, gpus, started_at, finished_at FROM workload_pods
    WHERE finished_at IS NULL AND started_at IS NOT NULL ${extra}
  ) AS p CROSS JOIN workloads w ON w.workload_id = p.workload_id`;

export function usageInWindow(statements: StatementCache, filter: WorkloadFilter, window: Window): UsageBreakdown {
  const queries = usageQueries(filter, window);
  const byGroup = new Map<string, UsageRow>();
  for (const [index, query] of queries.entries()) {
    const sign = index === 0 ? 1 : -1;
    for (const row of statements.get(query.sql).all(query.params) as UsageRow[]) {
      const key = JSON.stringify([row.initiative_id, row.instance_type]);
      const group = byGroup.get(key) ?? { ...row, gpu_hours: 0 };
      group.gpu_hours += sign * row.gpu_hours;
      byGroup.set(key, group);
    }
  }
  const usage: UsageBreakdown = { total: 0, byInitiative: new Map(), byInstanceType: new Map() };
  for (const group of byGroup.values()) {
    // Subtracting the corrections leaves rounding residue around 0; usage is never negative.
    const hours = Math.max(0, group.gpu_hours);
    usage.total += hours;
    usage.byInitiative.set(group.initiative_id, (usage.byInitiative.get(group.initiative_id) ?? 0) + hours);
    usage.byInstanceType.set(group.instance_type, (usage.byInstanceType.get(group.instance_type) ?? 0) + hours);
  }
  return usage;
}

/**
 * The queries of a usage read, each giving GPU-hours per (initiative, instance type); the first is
 * added, the others subtracted. Exported for EXPLAIN QUERY PLAN in tests.
 */
export function usageQueries(filter: WorkloadFilter, window: Window): SqlWhere[] {
  const where = whereOf(filter);
  const params = { ...where.params, windowTo: window.to };
  if (window.from !== null) {
    return [{
      sql: `SELECT w.initiative_id, w.instance_type,
              TOTAL(p.gpus * MAX(0, MIN(${POD_END}, @windowTo) - MAX(p.started_at, @windowFrom))) / 3600000.0 AS gpu_hours
            FROM ${PODS_REACHING('@windowFrom', 'AND started_at < @windowTo')}
            WHERE ${where.sql}
            GROUP BY w.initiative_id, w.instance_type`,
      params: { ...params, windowFrom: window.from },
    }];
  }
  // Since ever (budgets of period `total`): joining every pod of the history costs two lookups per
  // pod, so take each workload's GPU-seconds read at @windowTo from the covering list index, floored
  // at 0 as every per-workload figure is (gpuSecondsSql, the expression of GPU_HOURS_SQL). Only the
  // workloads with pods reaching past @windowTo can count more there than up to @windowTo, and those
  // are few (the running ones, when @windowTo is now). The second query takes back, for each of
  // them, that floored figure and puts in its place its aggregate minus those pods' time past
  // @windowTo, floored after the subtraction: an open pod that started after the reading time counts
  // negative in the aggregate and as much in the correction, so flooring before it would count the
  // pod twice.
  const aggregate = `
    SELECT w.initiative_id, w.instance_type, TOTAL(${gpuSecondsSql('@windowTo')}) / 3600.0 AS gpu_hours
    FROM workloads w WHERE ${where.sql}
    GROUP BY w.initiative_id, w.instance_type`;
  // Per pod: its share in the aggregate (see REFRESH_AGGREGATES) minus its share up to @windowTo.
  const beyond = `
    SELECT initiative_id, instance_type,
      TOTAL(MAX(0.0, aggregate_seconds) - MAX(0.0, aggregate_seconds - beyond_seconds)) / 3600.0 AS gpu_hours
    FROM (
      SELECT w.initiative_id, w.instance_type, ${rawGpuSecondsSql('@windowTo')} AS aggregate_seconds,
        TOTAL(p.gpus * (
          CASE WHEN p.finished_at IS NOT NULL THEN MAX(0, p.finished_at - p.started_at)
               ELSE COALESCE(w.completed_at, @windowTo) - p.started_at END
          - MAX(0, MIN(${POD_END}, @windowTo) - p.started_at))) / 1000.0 AS beyond_seconds
      FROM ${PODS_REACHING('@windowTo')}
      WHERE ${where.sql}
      GROUP BY w.workload_id)
    GROUP BY initiative_id, instance_type`;
  return [{ sql: aggregate, params }, { sql: beyond, params }];
}
