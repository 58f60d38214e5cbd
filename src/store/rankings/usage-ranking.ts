// The usage rankings: the workloads of a filter by idle GPU-hours or by GPU efficiency over their
// whole life, from workload_usage (schema v6). Only workloads with a utilization sample are ranked:
// the others have no value. Each team's top is a walk of workload_usage_idle or _efficiency from
// one end; the candidates of the filter's teams are merged by topUsage, ties to the smaller
// workload_id in both orders as in the other rankings. The count and the sums of the mean come from
// workload_usage_idle alone, which covers them since schema v9 (migrations/v09-usage-index.ts).
import type { UsageRanking, UsageSortKey, WorkloadFilter } from '../../query/ports.js';
import type { SqlDialect } from '../sql/dialect.js';
import { compareBinary, rankedPairsQuery, type RankingOptions } from './gpu-hours-ranking.js';
import { gpuHoursSql, scopeWhere, type SqlWhere } from '../sql/workload-sql.js';

export type UsageRankingOptions = RankingOptions & { sortBy: UsageSortKey };

export interface UsageCandidate {
  workload_id: string;
  name: string;
  initiative_id: string;
  value: number;
  util_seconds: number;
  gpu_hours: number;
}

export interface UsageOverall {
  n: number;
  idle_seconds: number;
  util_weighted: number;
  util_seconds: number;
}

/** The expression of workload_usage_efficiency (migrations/v06-usage.ts), word for word but the alias: the share of 1. */
const efficiencySql = (d: SqlDialect) =>
  d.engine === 'sqlite' ? '(CAST(u.util_weighted AS REAL) / u.util_seconds)' : '(u.util_weighted::float8 / u.util_seconds)';

/**
 * The index each ranking walks. Named for SQLite, whose planner otherwise takes the idle index for
 * the efficiency ranking too (it covers more columns since v9) and sorts a whole team by efficiency.
 */
const USAGE_INDEXES: Record<UsageSortKey, string> = { idle_gpu_hours: 'workload_usage_idle', gpu_efficiency: 'workload_usage_efficiency' };

const valueSql = (d: SqlDialect, sortBy: UsageSortKey) =>
  sortBy === 'idle_gpu_hours' ? 'u.idle_seconds' : efficiencySql(d);

/** The workloads row of usage `u`: PostgreSQL finds its month first (workload_keys), as every lookup by id does. */
const rowOfUsage = (d: SqlDialect) =>
  d.engine === 'sqlite'
    ? 'JOIN workloads w ON w.workload_id = u.workload_id'
    : 'JOIN workload_keys k ON k.workload_id = u.workload_id ' +
      'JOIN workloads w ON w.workload_id = k.workload_id AND w.submitted_at = k.submitted_at';

/** The teams (initiatives) of the filter that have workloads. */
export function rankedTeamsQuery(d: SqlDialect, filter: WorkloadFilter): SqlWhere {
  const pairs = rankedPairsQuery(d, filter);
  return { sql: `SELECT DISTINCT initiative_id FROM (${pairs.sql})${d.subqueryAlias('pairs')}`, params: pairs.params };
}

/** The top @limit of one team (`team`: a parameter or a lateral column), with the filter's status when it has one. */
export function teamTopSql(d: SqlDialect, filter: WorkloadFilter, options: UsageRankingOptions, team: string): string {
  const status = filter.status === undefined ? '' : ' AND w.status = @status';
  const value = valueSql(d, options.sortBy);
  return `SELECT u.workload_id, w.name, w.initiative_id, ${value} AS value, u.util_seconds, ${gpuHoursSql(d)} AS gpu_hours
    FROM workload_usage u${d.indexedBy(USAGE_INDEXES[options.sortBy])} ${rowOfUsage(d)}
    WHERE u.organization_id = @org AND u.initiative_id = ${team} AND u.util_seconds > 0${status}
    ORDER BY ${value} ${options.order === 'asc' ? 'ASC' : 'DESC'}, u.workload_id ASC LIMIT @limit`;
}

/** Every team's top in one query (PostgreSQL: one round trip). */
export function teamTopsQuery(d: SqlDialect, filter: WorkloadFilter, options: UsageRankingOptions): SqlWhere {
  const teams = rankedTeamsQuery(d, filter);
  return {
    sql: `SELECT top.* FROM (${teams.sql}) AS team CROSS JOIN LATERAL (${teamTopSql(d, filter, options, 'team.initiative_id')}) AS top`,
    params: { ...teams.params, ...topParams(filter, options) },
  };
}

export function topParams(filter: WorkloadFilter, options: UsageRankingOptions): Record<string, string | number> {
  return {
    org: filter.scope.organizationId,
    limit: options.limit,
    now: options.now,
    ...(filter.status === undefined ? {} : { status: filter.status }),
  };
}

/** How many workloads of the filter have a value, and the sums of their averages. */
export function usageOverallQuery(d: SqlDialect, filter: WorkloadFilter): SqlWhere {
  const scope = scopeWhere(d, filter, 'u');
  const status = filter.status === undefined ? '' : ' AND w.status = @status';
  const sums = ['idle_seconds', 'util_weighted', 'util_seconds'].map((c) => `${d.sumInt(`u.${c}`)} AS ${c}`).join(', ');
  return {
    sql: `SELECT COUNT(*) AS n, ${sums}
      FROM workload_usage u${status === '' ? '' : ` ${rowOfUsage(d)}`} WHERE ${scope.sql} AND u.util_seconds > 0${status}`,
    params: { ...scope.params, ...(filter.status === undefined ? {} : { status: filter.status }) },
  };
}

/** The ranking from the teams' candidates and the filter's overall sums. */
export function usageRankingResult(
  candidates: readonly UsageCandidate[],
  overall: UsageOverall,
  options: UsageRankingOptions,
): UsageRanking {
  const sign = options.order === 'asc' ? 1 : -1;
  const top = [...candidates]
    .sort((a, b) => sign * (a.value - b.value) || compareBinary(a.workload_id, b.workload_id))
    .slice(0, options.limit);
  const idle = options.sortBy === 'idle_gpu_hours';
  // Idle: the mean per workload; efficiency: weighted by sampled GPU-time, as a group's is.
  const average = idle ? overall.idle_seconds / 3600 / overall.n : overall.util_weighted / (overall.util_seconds * 10_000);
  return {
    entries: top.map((c) => ({
      workloadId: c.workload_id,
      name: c.name,
      initiativeId: c.initiative_id,
      value: idle ? c.value / 3600 : c.value / 10_000,
      coverage: c.gpu_hours <= 0 ? 1 : Math.min(1, c.util_seconds / (c.gpu_hours * 3600)),
    })),
    totalCount: overall.n,
    average: overall.n === 0 ? null : average,
  };
}
