// GPU-ms used inside each of a few spans of time, per kind of GPU time that a price can tell apart
// (cluster, instance type, GPU model, capacity type) and per initiative: what a cost over a window is
// made of. The caller cuts its window where any rate changes, so that inside a span every kind has
// one rate, and multiplies a handful of sums by it. Each span is read like a capacity window
// (usage-queries.ts): the pods reaching into it, clipped to it.
import type { PricedUsageRow, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import { whereOf } from '../sql/workload-sql.js';
import type { SqlQuery } from '../sql/executor.js';
import { podsReachingFrom, POD_END } from './usage-queries.js';

export interface PricedUsageSqlRow {
  initiative_id: string;
  instance_type: string;
  cluster_id: string;
  gpu_model: string | null;
  capacity_type: string | null;
  gpu_ms: number;
}

/** One query per span, in their order; none for a team scope without teams. */
export function pricedUsageQueries(d: SqlDialect, filter: WorkloadFilter, spans: readonly { from: number; to: number }[]): SqlQuery[] {
  if (filter.scope.initiatives?.length === 0) return [];
  const where = whereOf(d, filter);
  const clipped = `p.gpus * ${d.greatest('0', `${d.least(POD_END, '@windowTo')} - ${d.greatest('p.started_at', '@windowFrom')}`)}`;
  const sql = `SELECT w.initiative_id, w.instance_type, w.cluster_id, w.gpu_model, w.capacity_type, ${d.total(clipped)} AS gpu_ms
    FROM ${podsReachingFrom(d)}
    WHERE ${where.sql}
    GROUP BY w.initiative_id, w.instance_type, w.cluster_id, w.gpu_model, w.capacity_type`;
  return spans.map((span) => ({ sql, params: { ...where.params, windowFrom: span.from, windowTo: span.to } }));
}

/** The rows of each span's query, tagged with the span's index; groups with no time are left out. */
export function pricedUsageRows(results: readonly (readonly PricedUsageSqlRow[])[]): PricedUsageRow[] {
  return results.flatMap((rows, span) =>
    rows
      .filter((row) => Number(row.gpu_ms) > 0)
      .map((row) => ({
        span,
        initiativeId: row.initiative_id,
        instanceType: row.instance_type,
        clusterId: row.cluster_id,
        gpuModel: row.gpu_model,
        capacityType: (row.capacity_type ?? null) as PricedUsageRow['capacityType'],
        gpuMs: Number(row.gpu_ms),
      })));
}
