// The usage rankings on SQLite: the queries of src/store/common/usage-ranking-queries.ts, each team's
// top read team by team, a short walk of its usage index.
import type { UsageRanking, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import * as shared from '../common/usage-ranking-queries.js';
import type { StatementCache } from './workload-sql.js';

export function rankByUsage(statements: StatementCache, filter: WorkloadFilter, options: shared.UsageRankingOptions): UsageRanking {
  const teams = shared.rankedTeamsQuery(SQLITE, filter);
  const found = statements.get(teams.sql).all(teams.params) as { initiative_id: string }[];
  const top = statements.get(shared.teamTopSql(SQLITE, filter, options, '@team'));
  const candidates: shared.UsageCandidate[] = [];
  for (const { initiative_id: team } of found) candidates.push(...(top.all({ ...shared.topParams(filter, options), team }) as shared.UsageCandidate[]));
  const overall = shared.usageOverallQuery(SQLITE, filter);
  return shared.usageRankingResult(candidates, statements.get(overall.sql).get(overall.params) as shared.UsageOverall, options);
}
