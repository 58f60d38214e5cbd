// The GPU-hours ranking on SQLite: the queries of src/store/common/ranking-queries.ts, the finished
// workloads' top read pair by pair, each a short walk of workloads_finished_gpu_hours.
import type { GpuHoursRanking, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import * as shared from '../common/ranking-queries.js';
import type { StatementCache } from './workload-sql.js';

type Options = shared.RankingOptions;

export function rankByGpuHours(statements: StatementCache, filter: WorkloadFilter, options: Options): GpuHoursRanking {
  return rankingOf(statements, filter, options, shared.rankingSource(filter));
}

/** The ranking from the given source; exported so that tests can compare the two. */
export function rankingOf(statements: StatementCache, filter: WorkloadFilter, options: Options, source: shared.RankingSource): GpuHoursRanking {
  const top = source === 'rollups' ? topFromIndexes(statements, filter, options) : all<shared.Ranked>(statements, shared.rawTopQuery(SQLITE, filter, options));
  const count = source === 'rollups' ? shared.totalsCountQuery(SQLITE, filter, options.now) : shared.rawCountQuery(SQLITE, filter, options.now);
  const overall = statements.get(count.sql).get(count.params) as shared.RankingOverall;
  const about = top.length === 0 ? [] : all<shared.RankedAbout>(statements, shared.rankedAboutQuery(SQLITE, top.map((r) => r.id)));
  return shared.rankingResult(top, overall, about);
}

function topFromIndexes(statements: StatementCache, filter: WorkloadFilter, options: Options): shared.Ranked[] {
  const finished = shared.finishedTopSql(SQLITE, { initiative: '@initiative', status: '@status', order: options.order });
  const candidates = pairTops<shared.Ranked>(statements, filter, finished, options.limit);
  candidates.push(...all<shared.Ranked>(statements, shared.unfinishedTopQuery(SQLITE, filter, options)));
  return shared.topOf(candidates, options);
}

/**
 * The candidates of a ranking walked pair by pair: `pairTopSql` (parameters @org, @initiative,
 * @status, @limit) run for each (initiative, status) pair of the filter that has workloads.
 */
export function pairTops<Row>(statements: StatementCache, filter: WorkloadFilter, pairTopSql: string, limit: number): Row[] {
  const pairs = shared.rankedPairsQuery(SQLITE, filter);
  const found = statements.get(pairs.sql).all(pairs.params) as { initiative_id: string; status: string }[];
  const top = statements.get(pairTopSql);
  const candidates: Row[] = [];
  for (const pair of found) candidates.push(...(top.all({ org: filter.scope.organizationId, initiative: pair.initiative_id, status: pair.status, limit }) as Row[]));
  return candidates;
}

export function all<Row>(statements: StatementCache, query: { sql: string; params: object }): Row[] {
  return statements.get(query.sql).all(query.params) as Row[];
}
