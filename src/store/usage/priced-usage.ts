// GPU-ms used inside each of a few spans of time, per kind of GPU time that a price can tell apart
// (cluster, instance type, GPU model, capacity type) and per initiative: what a cost over a window is
// made of. The caller cuts its window where any rate changes, so that inside a span every kind has
// one rate, and multiplies a handful of sums by it. Each span is read like a capacity window
// (usage-queries.ts): the pods reaching into it, clipped to it.
// A statistic, a ranking or a chargeback also groups by its own key (and a series by the interval of
// submission). With `usage`, each workload's idle GPU-time and energy, which the index keeps per
// workload and not per moment, are spread over its pods' time in proportion: a span holding a third
// of a workload's GPU-time holds a third of its idle minutes and its energy.
import type { PricedUsageOptions, PricedUsageRow, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import { GROUP_COLUMNS } from '../statistics/group-columns.js';
import { intervalSql } from '../statistics/trend-period.js';
import { USAGE_JOIN } from '../sql/usage-join.js';
import { gpuMsSql, whereOf } from '../sql/workload-sql.js';
import type { SqlQuery } from '../sql/executor.js';
import { podsReachingFrom, POD_END } from './usage-queries.js';
import { intervalStart } from '../../domain/trend-interval.js';

export interface PricedUsageSqlRow {
  initiative_id: string;
  instance_type: string;
  cluster_id: string;
  gpu_model: string | null;
  capacity_type: string | null;
  gpu_ms: number;
  key?: string | null;
  period?: number | null;
  idle_ms?: number | null;
  energy_dj?: number | null;
}

const KIND_COLUMNS = ['w.initiative_id', 'w.instance_type', 'w.cluster_id', 'w.gpu_model', 'w.capacity_type'];

/** One query per span, in their order; none for a team scope without teams. */
export function pricedUsageQueries(
  d: SqlDialect,
  filter: WorkloadFilter,
  spans: readonly { from: number; to: number }[],
  options: PricedUsageOptions = {},
): SqlQuery[] {
  if (filter.scope.initiatives?.length === 0) return [];
  const where = whereOf(d, filter);
  const clipped = `p.gpus * ${d.greatest('0', `${d.least(POD_END, '@windowTo')} - ${d.greatest('p.started_at', '@windowFrom')}`)}`;
  const groups = [...KIND_COLUMNS];
  const selected = [...KIND_COLUMNS, `${d.total(clipped)} AS gpu_ms`];
  if (options.groupBy !== undefined) {
    const key = options.groupBy === 'workload_id' ? 'w.workload_id' : GROUP_COLUMNS[options.groupBy];
    groups.push(key);
    selected.push(`${key} AS key`);
  }
  if (options.interval !== undefined) {
    const period = intervalSql(options.interval, { ms: 'w.submitted_at' });
    groups.push(period);
    selected.push(`${period} AS period`);
  }
  let join = '';
  const params: Record<string, number> = {};
  if (options.usage !== undefined) {
    // The clip's share of its workload's GPU-time, read as the statistics read it (at completion, else at @now).
    const share = `${clipped} / ${d.greatest(d.float('1.0'), gpuMsSql(d, '@now'))}`;
    selected.push(`${d.total(`${share} * COALESCE(u.idle_seconds, 0) * ${d.float('1000.0')}`)} AS idle_ms`);
    selected.push(`${d.total(`${share} * COALESCE(u.energy_dj, 0)`)} AS energy_dj`);
    join = USAGE_JOIN;
    params.now = options.usage.now;
  }
  const sql = `SELECT ${selected.join(', ')}
    FROM ${podsReachingFrom(d)} ${join}
    WHERE ${where.sql}
    GROUP BY ${groups.join(', ')}`;
  return spans.map((span) => ({ sql, params: { ...where.params, ...params, windowFrom: span.from, windowTo: span.to } }));
}

/** The rows of each span's query, tagged with the span's index; groups with no time are left out. */
export function pricedUsageRows(results: readonly (readonly PricedUsageSqlRow[])[], options: PricedUsageOptions = {}): PricedUsageRow[] {
  const { interval } = options;
  return results.flatMap((rows, span) =>
    rows
      .filter((row) => Number(row.gpu_ms) > 0)
      .map((row) => {
        const priced: PricedUsageRow = {
          span,
          initiativeId: row.initiative_id,
          instanceType: row.instance_type,
          clusterId: row.cluster_id,
          gpuModel: row.gpu_model,
          capacityType: (row.capacity_type ?? null) as PricedUsageRow['capacityType'],
          gpuMs: Number(row.gpu_ms),
        };
        if (options.groupBy !== undefined) priced.key = row.key ?? '';
        if (interval !== undefined) priced.submittedIn = intervalStart(interval, Number(row.period));
        if (options.usage !== undefined) {
          priced.idleGpuMs = Number(row.idle_ms ?? 0);
          priced.energyDj = Number(row.energy_dj ?? 0);
        }
        return priced;
      }));
}
