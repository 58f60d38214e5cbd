// The read side on PostgreSQL: WorkloadIndex over a pg.Pool (connection.ts's read pool), running the
// queries SQLite runs (src/store/common/), rendered for PostgreSQL. A read of several statements (a
// list page and its count, a ranking, a usage read) sees one snapshot, as on SQLite. A database that
// cannot answer now (a restart, a failover, a full pool) fails the read with IndexBusyError, which the
// API answers 503 with Retry-After; any other error stays what it is (a 500).
//
// A list page and its count are one statement (withCount). Lists and lookups by id run as named
// statements (prepared-statements.ts), which plan_cache_mode = auto runs on their generic plans from
// the sixth call, where those were measured as good as the custom ones; every other read stays
// unnamed, planned for its values at each call. EXPLAIN ANALYZE on the 1M-row bench index (17
// monthly partitions):
// - a list page without dates plans in 2.3-5 ms and runs in 0.15-0.4 ms on either plan; its generic
//   plan takes the one index its filter leaves (org; org and one of team, status, submitter,
//   is_managed; org, team and status) and prunes the months at run time. Where two indexes fit,
//   the values decide: before the team-and-status index (migrations.ts v4), a team's pending
//   workloads where the team had none ran 297 ms on the generic plan, 20 ms on a custom one.
// - dated lists plan in 0.2-0.6 ms (the dates prune at plan time), and their count, a range of rows,
//   ran 1.4-6x slower on a generic plan (lead's last 30 days: 11 -> 70 ms).
// - statistics and the capacity reads ran 7x (44 vs 6.5 ms) and 130x slower on generic plans, and
//   plan_cache_mode = auto switches statistics to theirs after five calls: they stay unnamed.
import type { TrendInterval } from '../../domain/trend-interval.js';
import type pg from 'pg';
import type { WorkloadView } from '../../domain/workload.js';
import type {
  GpuHoursRanking, Keyset, ListPage, QueuePercentiles, QueueRanking, StatsGroupKey, StatsResult, UsageBreakdown, WorkloadFilter, WorkloadIndex,
  TrendsResult, UsageRanking, TeamCounts,
} from '../../query/ports.js';
import { POSTGRES } from '../common/dialect.js';
import * as queueRanking from '../common/queue-ranking-queries.js';
import * as ranking from '../common/ranking-queries.js';
import * as usageRanking from '../common/usage-ranking-queries.js';
import { toRecord, toView, type ViewRow, type WorkloadRow } from '../common/row-mapping.js';
import { percentilesOfRanked, rankedWaitsQuery, type PercentileOptions, type RankedWaitRow } from '../common/queue-percentile-queries.js';
import { statsOfTrendRows, statsQuery, statsResult, trendQuery, trendResult, type StatsRow, type TrendRow } from '../common/stats-queries.js';
import { usageBreakdown, usageQueries, type UsageRow } from '../common/usage-queries.js';
import {
  activeGpusQuery, countQuery, describeQuery, listQuery, teamActiveGpusSql, teamCountsOf, teamStatusCountsSql, teamSeeksQuery, teamsToSeek, viewSql,
  type TeamGpusRow, type TeamStatusRow,
} from '../common/workload-reads.js';
import { asIndexBusy } from './errors.js';
import { PreparedStatements } from './prepared-statements.js';
import { inSnapshot, readRows, type ReadClient, type ReadQuery } from './read-queries.js';

const d = POSTGRES;

type PageRow = WorkloadRow & { list_total_count: number };

export interface PostgresIndexOptions {
  /**
   * Named statements on generic plans for the reads that gain from them (config
   * db_prepared_statements; default true). Off behind a pooler that cannot carry named statements.
   */
  preparedStatements?: boolean;
}

export class PostgresWorkloadIndex implements WorkloadIndex {
  readonly #pool: pg.Pool;
  readonly #prepared: PreparedStatements | null;

  constructor(pool: pg.Pool, options: PostgresIndexOptions = {}) {
    this.#pool = pool;
    this.#prepared = options.preparedStatements === false ? null : new PreparedStatements();
  }

  async list(filter: WorkloadFilter, page: { limit: number; after: Keyset | null }): Promise<ListPage> {
    const teams = teamsToSeek(filter);
    const pageQuery = teams === null ? listQuery(d, filter, page.after) : teamSeeksQuery(d, filter, { teams, after: page.after });
    const count = countQuery(d, filter);
    // One extra row tells whether another page follows without a second query.
    const query = withCount(pageQuery, count, rowsToRead(page.limit + 1));
    return this.#read(async (prepared) => {
      const named = prepared !== null && hasOneIndex(filter, teams) ? prepared : null;
      // The teams' seek unnests a list whose length only a custom plan knows: auto would plan it at
      // every call, so it takes its generic plan by force, in a transaction (two round trips more).
      const rows =
        named !== null && teams !== null
          ? await inSnapshot(this.#pool, (client) => readRows<PageRow>(client, query, named), { genericPlans: true })
          : await readRows<PageRow>(this.#pool, query, named);
      // An empty page (nothing matches, or a cursor past the end) carries no count: asked on its own.
      const totalCount = rows[0]?.list_total_count ?? (await readRows<{ n: number }>(this.#pool, count, named))[0]?.n ?? 0;
      return { items: rows.slice(0, page.limit).map(toRecord), totalCount, hasMore: rows.length > page.limit };
    });
  }

  async get(workloadId: string, now: number): Promise<WorkloadView | undefined> {
    // No partition can be pruned by id: this probes each month's primary key once. Its generic plan is
    // the custom one, so plan_cache_mode = auto takes it after five calls on a connection.
    const query = { sql: viewSql('@workloadId'), params: { workloadId } };
    const [row] = await this.#read((prepared) => readRows<ViewRow>(this.#pool, query, prepared));
    return row === undefined ? undefined : toView(row, now);
  }

  async stats(filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): Promise<StatsResult> {
    const rows = await this.#read(() => readRows<StatsRow>(this.#pool, statsQuery(d, filter, { groupBy, now })));
    return statsResult(rows, groupBy);
  }

  async queuePercentiles(filter: WorkloadFilter, options: PercentileOptions, now: number): Promise<QueuePercentiles> {
    const rows = await this.#read(() => readRows<RankedWaitRow>(this.#pool, rankedWaitsQuery(d, filter, options, now)));
    return percentilesOfRanked(rows, options);
  }

  async trends(filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: TrendInterval }, now: number): Promise<TrendsResult> {
    const rows = await this.#read(() => readRows<TrendRow>(this.#pool, trendQuery(d, filter, { ...options, now })));
    return { series: trendResult(rows, options.interval), stats: statsOfTrendRows(rows, options.groupBy) };
  }

  async rankByGpuHours(filter: WorkloadFilter, options: ranking.RankingOptions): Promise<GpuHoursRanking> {
    return this.rankingOf(filter, options, ranking.rankingSource(filter));
  }

  /** The ranking from the given source; public so that tests can compare the two. */
  async rankingOf(filter: WorkloadFilter, options: ranking.RankingOptions, source: ranking.RankingSource): Promise<GpuHoursRanking> {
    return this.#read(() =>
      inSnapshot(this.#pool, async (client) => {
        const top = source === 'rollups' ? await topFromIndexes(client, filter, options) : await readRows<ranking.Ranked>(client, ranking.rawTopQuery(d, filter, options));
        const count = source === 'rollups' ? ranking.totalsCountQuery(d, filter, options.now) : ranking.rawCountQuery(d, filter, options.now);
        const [overall] = await readRows<ranking.RankingOverall>(client, count);
        const about = top.length === 0 ? [] : await readRows<ranking.RankedAbout>(client, ranking.rankedAboutQuery(d, top.map((r) => r.id)));
        return ranking.rankingResult(top, overall ?? { n: 0, gpu_hours: 0 }, about);
      }),
    );
  }

  async rankByQueue(filter: WorkloadFilter, options: ranking.RankingOptions): Promise<QueueRanking> {
    const fromRollups = ranking.rankingSource(filter) === 'rollups';
    return this.#read(() =>
      inSnapshot(this.#pool, async (client) => {
        const top = fromRollups
          ? queueRanking.topQueues(
            [
              ...(await readRows<queueRanking.QueueCandidate>(client, queueRanking.endedTopsQuery(d, filter, options))),
              ...(await readRows<queueRanking.QueueCandidate>(client, queueRanking.waitingTopQuery(d, filter, options))),
            ],
            options,
          )
          : await readRows<queueRanking.QueueCandidate>(client, queueRanking.rawQueueTopQuery(d, filter, options));
        const count = fromRollups ? queueRanking.totalsQueueQuery(d, filter, options.now) : queueRanking.rawQueueCountQuery(d, filter, options.now);
        const [overall] = await readRows<queueRanking.QueueOverall>(client, count);
        const about = top.length === 0 ? [] : await readRows<ranking.RankedAbout>(client, ranking.rankedAboutQuery(d, top.map((r) => r.id)));
        return queueRanking.queueRankingResult(top, overall ?? { n: 0, queue_ms: 0 }, about);
      }),
    );
  }

  async rankByUsage(filter: WorkloadFilter, options: usageRanking.UsageRankingOptions): Promise<UsageRanking> {
    return this.#read(() =>
      inSnapshot(this.#pool, async (client) => {
        const candidates = await readRows<usageRanking.UsageCandidate>(client, usageRanking.teamTopsQuery(d, filter, options));
        const [overall] = await readRows<usageRanking.UsageOverall>(client, usageRanking.usageOverallQuery(d, filter));
        return usageRanking.usageRankingResult(candidates, overall ?? { n: 0, idle_seconds: 0, util_weighted: 0, util_seconds: 0 }, options);
      }),
    );
  }

  async describe(workloadIds: readonly string[], filter: WorkloadFilter): Promise<Map<string, { name: string; initiativeId: string }>> {
    const described = new Map<string, { name: string; initiativeId: string }>();
    if (workloadIds.length === 0) return described;
    const query = describeQuery(d, filter);
    const rows = await this.#read(() =>
      readRows<Pick<WorkloadRow, 'workload_id' | 'name' | 'initiative_id'>>(this.#pool, { sql: query.sql, params: { ...query.params, ids: d.listValue(workloadIds) } }),
    );
    for (const row of rows) described.set(row.workload_id, { name: row.name, initiativeId: row.initiative_id });
    return described;
  }

  async usage(filter: WorkloadFilter, window: { from: number | null; to: number }): Promise<UsageBreakdown> {
    return this.usageFrom(filter, window, 'any');
  }

  /** usage from the given source ('rows' keeps usage since ever off the rollups); public so that tests can compare the two. */
  async usageFrom(filter: WorkloadFilter, window: { from: number | null; to: number }, source: 'any' | 'rows'): Promise<UsageBreakdown> {
    const queries = usageQueries(d, filter, { window, source });
    if (queries.length === 0) return usageBreakdown([]);
    const results = await this.#read(() =>
      inSnapshot(this.#pool, async (client) => {
        const done: { rows: UsageRow[]; sign: 1 | -1 }[] = [];
        for (const query of queries) done.push({ rows: await readRows<UsageRow>(client, query), sign: query.sign });
        return done;
      }),
    );
    return usageBreakdown(results);
  }

  async activeGpus(filter: WorkloadFilter): Promise<number> {
    const [row] = await this.#read(() => readRows<{ gpus: number }>(this.#pool, activeGpusQuery(d, filter)));
    return row?.gpus ?? 0;
  }

  async teamCounts(): Promise<TeamCounts> {
    const [statuses, gpus] = await this.#read(() => Promise.all([
      readRows<TeamStatusRow>(this.#pool, { sql: teamStatusCountsSql(d), params: {} }),
      readRows<TeamGpusRow>(this.#pool, { sql: teamActiveGpusSql(d), params: {} }),
    ]));
    return teamCountsOf(statuses, gpus);
  }

  /**
   * `read`, an unavailable database's error turned into IndexBusyError. A read whose prepared
   * statements went stale (a migration changed what they return) runs once more, under new names.
   */
  async #read<T>(read: (prepared: PreparedStatements | null) => Promise<T>): Promise<T> {
    const generation = this.#prepared?.generation ?? 0;
    try {
      return await read(this.#prepared);
    } catch (error) {
      if (this.#prepared === null || !this.#prepared.renewAfter(error, generation)) throw asIndexBusy(error);
    }
    try {
      return await read(this.#prepared);
    } catch (error) {
      throw asIndexBusy(error);
    }
  }
}

/**
 * Whether the list of `filter` leaves the planner one index to take, so that a generic plan is the
 * custom one: no dates, and at most one of a team (an initiative, or a TEAM_LEAD's teams, each sought
 * on its own index), a status, a submitter and is_managed, or a team and a status together.
 */
function hasOneIndex(filter: WorkloadFilter, soughtTeams: readonly string[] | null): boolean {
  if (filter.submittedFrom !== undefined || filter.submittedBefore !== undefined) return false;
  // A scope not sought team by team is an `= ANY(list)` term beside the rest.
  if (filter.scope.initiatives !== null && soughtTeams === null) return false;
  const team = soughtTeams !== null || filter.initiativeId !== undefined;
  const others = [filter.submittedBy !== undefined, filter.isManaged !== undefined];
  // A team and a status have an index of their own (migrations.ts v4).
  if (team && filter.status !== undefined) return !others.some((named) => named);
  return [team, filter.status !== undefined, ...others].filter((named) => named).length <= 1;
}

/** Every (initiative, status) pair's finished top in one statement, and the unfinished top. */
async function topFromIndexes(client: ReadClient, filter: WorkloadFilter, options: ranking.RankingOptions): Promise<ranking.Ranked[]> {
  const queries: ReadQuery[] = [ranking.finishedTopsQuery(d, filter, options), ranking.unfinishedTopQuery(d, filter, options)];
  const candidates: ranking.Ranked[] = [];
  for (const query of queries) candidates.push(...(await readRows<ranking.Ranked>(client, query)));
  return ranking.topOf(candidates, options);
}

// The row counts a page reads, written into its text: a `LIMIT $n` would leave plan_cache_mode = auto
// estimating a tenth of the rows for the generic plan, so it would plan every page afresh (2.3-5 ms).
// A few fixed counts (the API's limit is 1-100) keep the statements a connection holds to a few per
// filter shape.
const ROWS_TO_READ = [21, 51, 101];

/** The rows to read for `wanted`: the next fixed count at or above it. */
export function rowsToRead(wanted: number): number {
  return ROWS_TO_READ.find((rows) => rows >= wanted) ?? wanted;
}

/**
 * A page and its count as one statement, each row carrying the count: one round trip and one snapshot,
 * where a transaction took four (BEGIN, page, count, COMMIT). The count is an uncorrelated subquery,
 * run once. The two builders name their parameters after the same filter; a name used twice must
 * hold the same value.
 */
export function withCount(page: ReadQuery, count: ReadQuery, rows: number): ReadQuery {
  for (const [name, value] of Object.entries(count.params)) {
    if (name in page.params && JSON.stringify(page.params[name]) !== JSON.stringify(value)) throw new Error(`The page and its count bind @${name} to different values`);
  }
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`Not a row count: ${rows}`);
  return {
    sql: `SELECT page.*, (${count.sql}) AS list_total_count FROM (${page.sql.replaceAll('@limit', String(rows))}) AS page ORDER BY page.submitted_at DESC, page.workload_id DESC`,
    params: { ...page.params, ...count.params },
  };
}
