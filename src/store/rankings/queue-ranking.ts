// The queue ranking (sort_by=queue_seconds): the workloads of a filter by their wait from submission
// to start, pending ones up to `now`. Ties go to the smaller workload_id in both orders, as in the
// GPU-hours ranking (ranking-queries.ts), whose shape this follows:
// - waits that ended never change: workloads_queue_ended (schema v8) holds them in order per
//   (initiative, status), so each pair's top is a short walk from one end;
// - waits still growing (neither started nor finished, a few percent) are read at `now` from the
//   unfinished rows' index;
// - the count and the mean come from workload_totals' queue columns, plus the floor at 0 of rows
//   submitted after `now` (clock skew; normally an empty range).
// A scope without teams takes the query over the rows, which gives the same figures.
import type { QueueRanking, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import { endedWaitSql, QUEUE_ENDED } from '../rollups/queue-columns.js';
import {
  compareBinary, openTopQuery, rankedPairsQuery, rawTopQuery, type RankedAbout, type RankedValue, type RankingOptions,
} from './gpu-hours-ranking.js';
import { DAY_MS, STILL_WAITING } from '../sql/rollup-sql.js';
import { queueMsSql, whereOf, type SqlWhere } from '../sql/workload-sql.js';

/** A candidate; `id` is the dialect's rowId, by which the winners are described. */
export interface QueueCandidate {
  id: number | string;
  workload_id: string;
  queue_ms: number;
}

export interface QueueOverall {
  n: number;
  queue_ms: number;
}

const directionOf = (options: Pick<RankingOptions, 'order'>) => (options.order === 'asc' ? 'ASC' : 'DESC');

/**
 * The top @limit ended waits of one (initiative, status) pair of @org (`@initiative` and `@status`
 * parameters, or a lateral row's columns). The wait and the condition are the index's, word for word.
 */
export function endedTopSql(d: SqlDialect, options: { initiative: string; status: string; order: 'asc' | 'desc' }): string {
  return `SELECT w.${d.rowId} AS id, w.workload_id, ${endedWaitSql(d)} AS queue_ms FROM workloads w${d.indexedBy('workloads_queue_ended')}
     WHERE w.organization_id = @org AND w.initiative_id = ${options.initiative} AND w.status = ${options.status} AND ${QUEUE_ENDED}
     ORDER BY queue_ms ${directionOf(options)}, w.workload_id ASC LIMIT @limit`;
}

/** One query for every pair's top (PostgreSQL: one round trip instead of one per pair). */
export function endedTopsQuery(d: SqlDialect, filter: WorkloadFilter, options: RankingOptions): SqlWhere {
  const pairs = rankedPairsQuery(d, filter);
  const best = endedTopSql(d, { initiative: 'pair.initiative_id', status: 'pair.status', order: options.order });
  return {
    sql: `SELECT best.id, best.workload_id, best.queue_ms FROM (${pairs.sql}) AS pair CROSS JOIN LATERAL (${best}) AS best`,
    params: { ...pairs.params, org: filter.scope.organizationId, limit: options.limit },
  };
}

const QUEUE_MS = (d: SqlDialect): RankedValue => ({ sql: queueMsSql(d), as: 'queue_ms' });

/** The top @limit waits of the filter still growing at @now. */
export function waitingTopQuery(d: SqlDialect, filter: WorkloadFilter, options: RankingOptions): SqlWhere {
  return openTopQuery(d, filter, options, QUEUE_MS(d), STILL_WAITING);
}

/** The top @limit of the filter over the rows. */
export function rawQueueTopQuery(d: SqlDialect, filter: WorkloadFilter, options: RankingOptions): SqlWhere {
  return rawTopQuery(d, filter, options, QUEUE_MS(d));
}

/**
 * Count and summed wait of the filter at @now, in whole ms: workload_totals' linear figures (a
 * waiting row's n × now taken in 64-bit integers), plus the floor of rows submitted after @now.
 */
export function totalsQueueQuery(d: SqlDialect, filter: WorkloadFilter, now: number): SqlWhere {
  const totals = whereOf(d, filter, 't');
  const where = whereOf(d, filter);
  const totalsQueueMs = `(t.queue_base_ms + (t.waiting * ${d.int('@now')} - t.waiting_days * ${DAY_MS}))`;
  const submittedAfterNow = `${STILL_WAITING} AND w.submitted_at > @now`;
  return {
    sql: `SELECT ${d.sumInt('n')} AS n, ${d.total('queue_ms')} AS queue_ms FROM (
         SELECT t.workloads AS n, ${totalsQueueMs} AS queue_ms FROM workload_totals t WHERE ${totals.sql}
         UNION ALL
         SELECT 0, w.submitted_at - @now FROM workloads w WHERE ${where.sql} AND ${submittedAfterNow})${d.subqueryAlias('figures')}`,
    params: { ...where.params, now },
  };
}

export function rawQueueCountQuery(d: SqlDialect, filter: WorkloadFilter, now: number): SqlWhere {
  const where = whereOf(d, filter);
  return {
    sql: `SELECT COUNT(*) AS n, ${d.total(queueMsSql(d))} AS queue_ms FROM workloads w WHERE ${where.sql}`,
    params: { ...where.params, now },
  };
}

/** The first `limit` of the candidates in the ranking's order. */
export function topQueues(candidates: readonly QueueCandidate[], options: Pick<RankingOptions, 'order' | 'limit'>): QueueCandidate[] {
  const sign = options.order === 'asc' ? 1 : -1;
  return [...candidates]
    .sort((a, b) => sign * (a.queue_ms - b.queue_ms) || compareBinary(a.workload_id, b.workload_id))
    .slice(0, options.limit);
}

export function queueRankingResult(top: readonly QueueCandidate[], overall: QueueOverall, about: readonly RankedAbout[]): QueueRanking {
  const described = new Map(about.map((row) => [row.id, row]));
  return {
    entries: top.map((row) => {
      const found = described.get(row.id) ?? { name: '', initiative_id: '' };
      return {
        workloadId: row.workload_id,
        name: found.name,
        initiativeId: found.initiative_id,
        // Whole seconds, as the workload's own queue_seconds.
        queueSeconds: Math.floor(Number(row.queue_ms) / 1000),
      };
    }),
    totalCount: Number(overall.n),
    // The mean of exact ms, as statistics' average_queue_seconds.
    average: Number(overall.n) === 0 ? null : Number(overall.queue_ms) / 1000 / Number(overall.n),
  };
}
