// The queue ranking on SQLite: the queries of src/store/common/queue-ranking-queries.ts, the ended
// waits' top read pair by pair, each a short walk of workloads_queue_ended.
import type { QueueRanking, WorkloadFilter } from '../../query/ports.js';
import { SQLITE } from '../common/dialect.js';
import * as shared from '../common/queue-ranking-queries.js';
import { rankedAboutQuery, rankingSource, type RankedAbout, type RankingOptions, type RankingSource } from '../common/ranking-queries.js';
import { all, pairTops } from './ranking-queries.js';
import type { StatementCache } from './workload-sql.js';

export function rankByQueue(statements: StatementCache, filter: WorkloadFilter, options: RankingOptions): QueueRanking {
  return queueRankingOf(statements, filter, options, rankingSource(filter));
}

/** The ranking from the given source; exported so that tests can compare the two. */
export function queueRankingOf(statements: StatementCache, filter: WorkloadFilter, options: RankingOptions, source: RankingSource): QueueRanking {
  const fromRollups = source === 'rollups';
  const top = fromRollups ? topFromIndexes(statements, filter, options) : all<shared.QueueCandidate>(statements, shared.rawQueueTopQuery(SQLITE, filter, options));
  const count = fromRollups ? shared.totalsQueueQuery(SQLITE, filter, options.now) : shared.rawQueueCountQuery(SQLITE, filter, options.now);
  const overall = statements.get(count.sql).get(count.params) as shared.QueueOverall;
  const about = top.length === 0 ? [] : all<RankedAbout>(statements, rankedAboutQuery(SQLITE, top.map((r) => r.id)));
  return shared.queueRankingResult(top, overall, about);
}

function topFromIndexes(statements: StatementCache, filter: WorkloadFilter, options: RankingOptions): shared.QueueCandidate[] {
  const ended = shared.endedTopSql(SQLITE, { initiative: '@initiative', status: '@status', order: options.order });
  const candidates = pairTops<shared.QueueCandidate>(statements, filter, ended, options.limit);
  candidates.push(...all<shared.QueueCandidate>(statements, shared.waitingTopQuery(SQLITE, filter, options)));
  return shared.topQueues(candidates, options);
}
