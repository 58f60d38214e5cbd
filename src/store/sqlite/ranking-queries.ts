// The GPU-hours ranking: the top workloads of a filter by GPU-hours at `now`, their count and mean.
// Ties go to the smaller workload_id in both orders, so a ranking is stable between calls.
//
// Finished workloads' GPU-hours never change: workloads_finished_gpu_hours holds them in order per
// (initiative, status), so each pair's top is a short walk from one end. Unfinished ones (a few
// percent) are read at `now` from their own partial index. The count and the mean come from
// workload_totals. Filters those cannot hold (submitter, managed, submission times) take the
// query over the rows, which gives the same figures.
import type { GpuHoursRanking, WorkloadFilter } from '../../query/ports.js';
import { belowZeroAt, gpuMsFloorAt, HORIZON_INDEX, rollupsHold, totalsGpuMs } from './rollup-sql.js';
import { GPU_HOURS_SQL, gpuMsSql, whereOf, type StatementCache } from './workload-sql.js';

type Options = { order: 'asc' | 'desc'; limit: number; now: number };

interface Ranked {
  id: number;
  workload_id: string;
  gpu_hours: number;
}

// The expression of workloads_finished_gpu_hours, word for word; for a finished row it is
// GPU_HOURS_SQL to the last bit (COALESCE(completed_at, @now) is completed_at).
const FINISHED_GPU_HOURS = '(MAX(0.0, w.gpu_seconds_closed + w.open_gpus * (w.completed_at / 1000.0) - w.open_gpu_start_sum) / 3600.0)';

export function rankByGpuHours(statements: StatementCache, filter: WorkloadFilter, options: Options): GpuHoursRanking {
  return rankingOf(statements, filter, options, rollupsHold(filter, { status: true }) ? 'rollups' : 'rows');
}

/** The ranking from the given source; exported so that tests can compare the two. */
export function rankingOf(statements: StatementCache, filter: WorkloadFilter, options: Options, source: 'rollups' | 'rows'): GpuHoursRanking {
  const top = source === 'rollups' ? topFromIndexes(statements, filter, options) : rawTop(statements, filter, options);
  const overall = source === 'rollups' ? countFromTotals(statements, filter, options.now) : rawCount(statements, filter, options.now);
  const described = describe(statements, top.map((r) => r.id));
  return {
    entries: top.map((row) => {
      const about = described.get(row.id) ?? { name: '', initiative_id: '' };
      return { workloadId: row.workload_id, name: about.name, initiativeId: about.initiative_id, gpuHours: row.gpu_hours };
    }),
    totalCount: overall.n,
    average: overall.n === 0 ? null : overall.gpu_hours / overall.n,
  };
}

function topFromIndexes(statements: StatementCache, filter: WorkloadFilter, options: Options): Ranked[] {
  const direction = options.order === 'asc' ? 'ASC' : 'DESC';
  const totals = whereOf(filter, 't');
  const pairs = statements
    .get(`SELECT t.initiative_id, t.status FROM workload_totals t WHERE ${totals.sql} GROUP BY t.initiative_id, t.status HAVING SUM(t.workloads) > 0`)
    .all(totals.params) as { initiative_id: string; status: string }[];
  const finished = statements.get(
    `SELECT w.rowid AS id, w.workload_id, ${FINISHED_GPU_HOURS} AS gpu_hours FROM workloads w INDEXED BY workloads_finished_gpu_hours
     WHERE w.organization_id = @org AND w.initiative_id = @initiative AND w.status = @status AND w.completed_at IS NOT NULL
     ORDER BY gpu_hours ${direction}, w.workload_id ASC LIMIT @limit`,
  );
  const candidates: Ranked[] = [];
  for (const pair of pairs) {
    const params = { org: filter.scope.organizationId, initiative: pair.initiative_id, status: pair.status, limit: options.limit };
    candidates.push(...(finished.all(params) as Ranked[]));
  }
  const where = whereOf(filter);
  candidates.push(
    ...(statements
      .get(
        `SELECT w.rowid AS id, w.workload_id, ${GPU_HOURS_SQL} AS gpu_hours FROM workloads w INDEXED BY ${HORIZON_INDEX}
         WHERE ${where.sql} AND w.completed_at IS NULL ORDER BY gpu_hours ${direction}, w.workload_id ASC LIMIT @limit`,
      )
      .all({ ...where.params, now: options.now, limit: options.limit }) as Ranked[]),
  );
  const sign = options.order === 'asc' ? 1 : -1;
  candidates.sort((a, b) => sign * (a.gpu_hours - b.gpu_hours) || compareBinary(a.workload_id, b.workload_id));
  return candidates.slice(0, options.limit);
}

function rawTop(statements: StatementCache, filter: WorkloadFilter, options: Options): Ranked[] {
  const where = whereOf(filter);
  const direction = options.order === 'asc' ? 'ASC' : 'DESC';
  return statements
    .get(
      `SELECT w.rowid AS id, w.workload_id, ${GPU_HOURS_SQL} AS gpu_hours FROM workloads w
       WHERE ${where.sql} ORDER BY gpu_hours ${direction}, w.workload_id ASC LIMIT @limit`,
    )
    .all({ ...where.params, now: options.now, limit: options.limit }) as Ranked[];
}

/** Count and GPU-hours of the filter, summed in whole GPU-ms (as rawCount does, to the last bit). */
function countFromTotals(statements: StatementCache, filter: WorkloadFilter, now: number): { n: number; gpu_hours: number } {
  const totals = whereOf(filter, 't');
  const where = whereOf(filter);
  return statements
    .get(
      `SELECT COALESCE(SUM(n), 0) AS n, TOTAL(gpu_ms) / 3600000.0 AS gpu_hours FROM (
         SELECT t.workloads AS n, ${totalsGpuMs('t', '@now')} AS gpu_ms FROM workload_totals t WHERE ${totals.sql}
         UNION ALL
         SELECT 0, ${gpuMsFloorAt('@now')} FROM workloads w INDEXED BY ${HORIZON_INDEX} WHERE ${where.sql} AND ${belowZeroAt('@now')})`,
    )
    .get({ ...where.params, now }) as { n: number; gpu_hours: number };
}

function rawCount(statements: StatementCache, filter: WorkloadFilter, now: number): { n: number; gpu_hours: number } {
  const where = whereOf(filter);
  return statements
    .get(`SELECT COUNT(*) AS n, TOTAL(${gpuMsSql('@now')}) / 3600000.0 AS gpu_hours FROM workloads w WHERE ${where.sql}`)
    .get({ ...where.params, now }) as { n: number; gpu_hours: number };
}

/** Names and initiatives of the winners only, by rowid. */
function describe(statements: StatementCache, ids: number[]): Map<number, { name: string; initiative_id: string }> {
  if (ids.length === 0) return new Map();
  const rows = statements
    .get('SELECT w.rowid AS id, w.name, w.initiative_id FROM workloads w WHERE w.rowid IN (SELECT value FROM json_each(@ids))')
    .all({ ids: JSON.stringify(ids) }) as { id: number; name: string; initiative_id: string }[];
  return new Map(rows.map((row) => [row.id, row]));
}

/** SQLite's BINARY order of TEXT (UTF-8 bytes); JS `<` compares UTF-16 units, which differs past U+FFFF. */
function compareBinary(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}
