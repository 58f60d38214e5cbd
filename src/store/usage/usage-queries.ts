// GPU-hours consumed inside a window (capacity periods), from the pod intervals clipped to the window.
// Throughout, a pod ends at its finish, else at its workload's completion (as gpuHoursSql reads it),
// else it is still running and counts up to the window end. A workload never counts less than 0.
// A read is a few queries (usageQueries), each giving GPU-ms per (initiative, instance type), added or
// subtracted; each backend runs them in one snapshot and hands their rows to usageBreakdown.
import type { UsageBreakdown, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect, SqlParams } from '../sql/dialect.js';
import { compareBinary } from '../rankings/gpu-hours-ranking.js';
import { belowZeroAt, gpuMsFloorAt, HORIZON_INDEX, rollupsHold, totalsGpuMs } from '../sql/rollup-sql.js';
import { gpuMsAt, gpuMsSql, scopeWhere, whereOf } from '../sql/workload-sql.js';

export interface UsageRow {
  initiative_id: string;
  instance_type: string;
  gpu_ms: number;
}

export type UsageWindow = { from: number | null; to: number };
export type UsageSource = 'any' | 'rows';

/** One query of a usage read, giving GPU-ms per (initiative, instance type), added or subtracted. */
export interface UsageQuery {
  sql: string;
  params: SqlParams;
  sign: 1 | -1;
}

export const POD_END = 'COALESCE(p.finished_at, w.completed_at, @windowTo)';

/**
 * The started pods whose time may reach past @windowFrom (finished after it, or not finished), with
 * their workloads. Two ranges of workload_pods_finished joined by UNION ALL rather than an OR: SQLite
 * runs an OR as a rowid set and then reads the pods table, while each range alone reads only the
 * covering index. SQLite's CROSS JOIN keeps it driving from these pods (a slice of the history)
 * instead of from every workload of the organization. On PostgreSQL a pod also carries its
 * workload's submitted_at, the partition key, so that each pod's workload is one month's lookup.
 */
export const podsReachingFrom = (d: SqlDialect) => `(
    SELECT workload_id${d.partitionKey()}, gpus, started_at, finished_at FROM workload_pods
    WHERE finished_at > @windowFrom AND started_at IS NOT NULL AND started_at < @windowTo
    UNION ALL
    SELECT workload_id${d.partitionKey()}, gpus, started_at, finished_at FROM workload_pods
    WHERE finished_at IS NULL AND started_at IS NOT NULL AND started_at < @windowTo
  ) AS p ${d.orderedJoin} workloads w ON w.workload_id = p.workload_id${d.samePartition('w', 'p')}`;

/**
 * The started pods that a workload's aggregate, read at @windowTo, counts differently from their
 * time up to @windowTo (see `beyond` below): those finished after it, the open ones started after
 * it, and the open ones of a finished workload (read at its completion, they may have started after
 * it, or the completion may lie past @windowTo). Every other pod counts the same either way, to the
 * last bit. Normally a handful, all from indexes: where the open pods of running workloads are
 * many (150k live pods), none of them is read.
 */
const podsPastEnd = (d: SqlDialect) => `(
    SELECT workload_id${d.partitionKey()}, gpus, started_at, finished_at FROM workload_pods
    WHERE finished_at > @windowTo AND started_at IS NOT NULL
    UNION ALL
    SELECT workload_id${d.partitionKey()}, gpus, started_at, finished_at FROM workload_pods
    WHERE finished_at IS NULL AND started_at > @windowTo
    UNION ALL
    ${openPodsOfFinished(d)}
  ) AS p ${d.orderedJoin} workloads w ON w.workload_id = p.workload_id${d.samePartition('w', 'p')}`;

const FINISHED_OPEN = 'f.organization_id = @org AND f.completed_at IS NOT NULL AND f.open_gpus > 0';
const OPEN_POD = 'p.finished_at IS NULL AND p.started_at IS NOT NULL AND p.started_at <= @windowTo';

/**
 * The open pods of the organization's finished workloads: those workloads (workloads_finished_open,
 * normally empty), then their pods by workload id. SQLite keeps that order by its hints. PostgreSQL
 * has none, and it estimates workloads_finished_open's rows in thousands where there are normally
 * none (completed_at IS NOT NULL and open_gpus > 0 almost never hold together, which its statistics
 * cannot tell): with a join it hashed those workloads and probed them with every open pod of the
 * running ones, read from workload_pods_finished before it found the hash empty (at 1M rows 30k index
 * entries; more with more live pods), in a parallel plan: 45-70 ms of a capacity request. The ids as
 * an array computed once (an InitPlan) keep the order: an empty array reads no pod.
 */
function openPodsOfFinished(d: SqlDialect): string {
  if (d.engine === 'postgres') {
    return `SELECT p.workload_id, p.submitted_at, p.gpus, p.started_at, p.finished_at FROM workload_pods p
    WHERE p.workload_id = ANY(ARRAY(SELECT f.workload_id FROM workloads f WHERE ${FINISHED_OPEN}))
      AND ${OPEN_POD}`;
  }
  return `SELECT p.workload_id${d.partitionKey('p')}, p.gpus, p.started_at, p.finished_at
    FROM workloads f${d.indexedBy('workloads_finished_open')}
      ${d.orderedJoin} workload_pods p${d.indexedBy('workload_pods_workload')} ON p.workload_id = f.workload_id${d.samePartition('p', 'f')}
    WHERE ${FINISHED_OPEN}
      AND ${OPEN_POD}`;
}

/**
 * The queries of a usage read, each giving GPU-ms per (initiative, instance type). `source` 'rows'
 * keeps usage since ever off the rollups, to compare.
 */
export function usageQueries(d: SqlDialect, filter: WorkloadFilter, options: { window: UsageWindow; source?: UsageSource }): UsageQuery[] {
  const { window, source = 'any' } = options;
  // A team scope without teams sees nothing (and SQLite finds no plan for INDEXED BY under a false WHERE).
  if (filter.scope.initiatives?.length === 0) return [];
  const where = whereOf(d, filter);
  const params = { ...where.params, windowTo: window.to };
  if (window.from !== null) {
    const clipped = `p.gpus * ${d.greatest('0', `${d.least(POD_END, '@windowTo')} - ${d.greatest('p.started_at', '@windowFrom')}`)}`;
    return [{
      sql: `SELECT w.initiative_id, w.instance_type,
              ${d.total(clipped)} AS gpu_ms
            FROM ${podsReachingFrom(d)}
            WHERE ${where.sql}
            GROUP BY w.initiative_id, w.instance_type`,
      params: { ...params, windowFrom: window.from },
      sign: 1,
    }];
  }
  // Since ever (budgets of period `total`): each workload's GPU-ms read at @windowTo from its
  // aggregates, floored at 0 as every per-workload figure is (gpuMsSql), instead of joining every
  // pod of the history (two lookups per pod). The aggregate may count pods differently from their
  // time up to @windowTo (podsPastEnd); for each workload with such pods, `beyond` takes back that
  // floored figure and puts in its place its aggregate minus those pods' time past @windowTo, floored
  // after the subtraction: an open pod that started after the reading time counts negative in the
  // aggregate and as much in the correction, so flooring before it would count the pod twice.
  // Per pod: its share in the aggregate (see REFRESH_AGGREGATES) minus its share up to @windowTo.
  const pastEnd = `p.gpus * (
          CASE WHEN p.finished_at IS NOT NULL THEN ${d.greatest('0', 'p.finished_at - p.started_at')}
               ELSE COALESCE(w.completed_at, @windowTo) - p.started_at END
          - ${d.greatest('0', `${d.least(POD_END, '@windowTo')} - p.started_at`)})`;
  const zero = d.float('0.0');
  const flooredBeyond = `${d.greatest(zero, 'aggregate_ms')} - ${d.greatest(zero, 'aggregate_ms - beyond_ms')}`;
  const beyond = `
    SELECT initiative_id, instance_type, ${d.total(flooredBeyond)} AS gpu_ms
    FROM (
      SELECT w.initiative_id, w.instance_type, ${gpuMsAt(d, 'COALESCE(w.completed_at, @windowTo)')} AS aggregate_ms,
        ${d.total(pastEnd)} AS beyond_ms
      FROM ${podsPastEnd(d)}
      WHERE ${where.sql}
      GROUP BY ${d.workloadGroup('w')})${d.subqueryAlias('workloads_beyond')}
    GROUP BY initiative_id, instance_type`;
  if (source === 'rows' || !rollupsHold(filter)) {
    const aggregate = `
      SELECT w.initiative_id, w.instance_type, ${d.total(gpuMsSql(d, '@windowTo'))} AS gpu_ms
      FROM workloads w WHERE ${where.sql}
      GROUP BY w.initiative_id, w.instance_type`;
    return [{ sql: aggregate, params, sign: 1 }, { sql: beyond, params, sign: -1 }];
  }
  // The same aggregate from workload_totals (linear in @windowTo), with the floors of the rare
  // unfinished rows below 0 at @windowTo added back.
  const totals = scopeWhere(d, filter, 't');
  const rollup = `
    SELECT t.initiative_id, t.instance_type, ${d.total(totalsGpuMs(d, 't', '@windowTo'))} AS gpu_ms
    FROM workload_totals t WHERE ${totals.sql}
    GROUP BY t.initiative_id, t.instance_type HAVING SUM(t.workloads) > 0`;
  const floors = `
    SELECT w.initiative_id, w.instance_type, ${d.total(gpuMsFloorAt(d, '@windowTo'))} AS gpu_ms
    FROM workloads w${d.indexedBy(HORIZON_INDEX)} WHERE ${where.sql} AND ${belowZeroAt(d, '@windowTo')}
    GROUP BY w.initiative_id, w.instance_type`;
  return [{ sql: rollup, params, sign: 1 }, { sql: floors, params, sign: 1 }, { sql: beyond, params, sign: -1 }];
}

/** The breakdown from the rows of each query of usageQueries, in their order. */
export function usageBreakdown(results: readonly { rows: readonly UsageRow[]; sign: 1 | -1 }[]): UsageBreakdown {
  const byGroup = new Map<string, UsageRow>();
  for (const { rows, sign } of results) {
    for (const row of rows) {
      const key = JSON.stringify([row.initiative_id, row.instance_type]);
      const group = byGroup.get(key) ?? { ...row, gpu_ms: 0 };
      group.gpu_ms += sign * row.gpu_ms;
      byGroup.set(key, group);
    }
  }
  const usage: UsageBreakdown = { total: 0, byInitiative: new Map(), byInstanceType: new Map() };
  // In key order, whatever order the engine grouped in (SQLite's are sorted, PostgreSQL's hashed):
  // floating-point sums depend on the order of their terms.
  const groups = [...byGroup.values()]
    .sort((a, b) => compareBinary(a.initiative_id, b.initiative_id) || compareBinary(a.instance_type, b.instance_type));
  for (const group of groups) {
    // Subtracting the corrections of a bounded window leaves rounding residue around 0; usage is never negative.
    const hours = Math.max(0, group.gpu_ms) / 3_600_000;
    usage.total += hours;
    usage.byInitiative.set(group.initiative_id, (usage.byInitiative.get(group.initiative_id) ?? 0) + hours);
    usage.byInstanceType.set(group.instance_type, (usage.byInstanceType.get(group.instance_type) ?? 0) + hours);
  }
  return usage;
}
