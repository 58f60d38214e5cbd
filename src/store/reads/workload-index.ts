// The read side of the index (query/'s WorkloadIndex), once for both backends: each read builds its
// queries with the dialect, runs them on the executor and shapes the rows (the builders of
// sql/, statistics/, rankings/, usage/ and list-queries.ts). A read of several statements runs on one snapshot. Where the engines differ in
// what is cheap, the dialect says so and the read takes the path that suits it: SQLite, in the
// process, seeks key by key with short statements and counts a page apart (its texts are pinned by
// test/store/reads/sql-snapshot.test.ts); PostgreSQL, a round trip away, seeks every key in one statement,
// carries a page's count in the page, and runs the reads that gain from it on reused plans.
import type { TrendInterval } from '../../domain/trend-interval.js';
import type { WorkloadView } from '../../domain/workload.js';
import type {
  FleetHistoryQuery, FleetHistoryRow, GpuHoursRanking, Keyset, ListPage, PodGpuTime, PricedUsageOptions, PricedUsageRow, QueuePercentiles,
  QueueRanking, StatsGroupKey, StatsResult, TeamCounts, TrendsResult, UsageBreakdown, UsageRanking, WorkloadFilter, WorkloadIndex,
} from '../../query/ports.js';
import { EXACT_QUEUE_WAITS } from '../../query/ports.js';
import type { SqlDialect, SqlParams } from '../sql/dialect.js';
import * as queueRanking from '../rankings/queue-ranking.js';
import * as ranking from '../rankings/gpu-hours-ranking.js';
import * as usageRanking from '../rankings/usage-ranking.js';
import { toRecord, toView, type ViewRow, type WorkloadRow } from '../rows/row-mapping.js';
import {
  percentilesOfBuckets, percentilesOfRanked, percentilesOfSorted, rankedWaitsQuery, sortedWaitsQuery, sqliteWaitBucketsQuery,
  waitBucketsOfSqlite, waitBucketsQuery, type PercentileOptions, type RankedWaitRow, type SortedWaitsRow, type SqliteWaitBucketsRow,
} from '../statistics/queue-percentiles.js';
import type { WaitBucketRow } from '../statistics/wait-buckets.js';
import { CURSOR_KEY_SECRET, missingSecretError, SECRET_SQL, type SecretRow } from '../sql/service-secrets.js';
import {
  statsOfTrendRows, statsQuery, statsResult, trendQuery, trendResult, type StatsRow, type TrendRow,
} from '../statistics/stats-queries.js';
import { pricedUsageQueries, pricedUsageRows, type PricedUsageSqlRow } from '../usage/priced-usage.js';
import { usageBreakdown, usageQueries, type UsageRow, type UsageSource, type UsageWindow } from '../usage/usage-queries.js';
import {
  activeGpusQuery, countQuery, describeQuery, listQuery, mergeTeamPages, teamActiveGpusSql, teamCountsOf, teamFilter, teamSeeksQuery,
  teamStatusCountsSql, teamsToSeek, viewSql, type TeamGpusRow, type TeamStatusRow,
} from './list-queries.js';
import type { ReadExecutor, SqlQuery, SqlReader } from '../sql/executor.js';
import { rowsToRead, withCount } from './page-count.js';
import { fleetHistoryQuery, fleetHistoryRow, type FleetHistorySqlRow } from './fleet-history.js';

type PageRow = WorkloadRow & { list_total_count: number };
type Described = Map<string, { name: string; initiativeId: string }>;

export class SqlWorkloadIndex implements WorkloadIndex {
  readonly #x: ReadExecutor;
  readonly #d: SqlDialect;
  /** Read once: the key is made when the index is first opened and never changes in it. */
  #cursorKey: Promise<Uint8Array> | undefined;

  constructor(executor: ReadExecutor, dialect: SqlDialect) {
    this.#x = executor;
    this.#d = dialect;
  }

  async list(filter: WorkloadFilter, page: { limit: number; after: Keyset | null }): Promise<ListPage> {
    // One extra row tells whether another page follows without a second query.
    const wanted = page.limit + 1;
    const { rows, totalCount } = this.#d.inProcess
      ? await this.#pageApart(filter, page.after, wanted)
      : await this.#pageWithCount(filter, page.after, wanted);
    return { items: rows.slice(0, page.limit).map(toRecord), totalCount, hasMore: rows.length > page.limit };
  }

  async get(workloadId: string, now: number): Promise<WorkloadView | undefined> {
    // No partition can be pruned by id (PostgreSQL): this probes each month's primary key once, a
    // plan as good for any id.
    const row = await this.#x.get<ViewRow>({ sql: viewSql('@workloadId'), params: { workloadId } }, { reusable: true });
    return row === undefined ? undefined : toView(row, now);
  }

  async podGpuTimes(workload: { workloadId: string; submittedAt: number }): Promise<PodGpuTime[]> {
    const d = this.#d;
    const partition = d.partitionKey() === '' ? '' : ' AND submitted_at = @submittedAt';
    const rows = await this.#x.all<{ gpus: number; started_at: number; finished_at: number | null }>(
      {
        sql: `SELECT gpus, started_at, finished_at FROM workload_pods
              WHERE workload_id = @workloadId${partition} AND started_at IS NOT NULL ORDER BY started_at, pod_uid`,
        params: { workloadId: workload.workloadId, ...(partition === '' ? {} : { submittedAt: workload.submittedAt }) },
      },
      { reusable: true },
    );
    return rows.map((row) => ({
      gpus: Number(row.gpus),
      startedAt: Number(row.started_at),
      finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    }));
  }

  async stats(filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): Promise<StatsResult> {
    return statsResult(await this.#x.all<StatsRow>(statsQuery(this.#d, filter, { groupBy, now })), groupBy);
  }

  /**
   * Exact from at most `exactWaits` + 1 waits; a filter of more is read again into wait buckets. The
   * two reads need no common snapshot: the answer is the second one's alone.
   */
  async queuePercentiles(
    filter: WorkloadFilter,
    options: PercentileOptions & { exactWaits?: number },
    now: number,
  ): Promise<QueuePercentiles> {
    const bounded = { ...options, exactWaits: options.exactWaits ?? EXACT_QUEUE_WAITS };
    const read = bounded.exactWaits + 1;
    const exact = this.#d.sortedWaits
      ? percentilesOfSorted(await this.#x.all<SortedWaitsRow>(sortedWaitsQuery(filter, options.groupBy, now, read)), bounded)
      : percentilesOfRanked(await this.#x.all<RankedWaitRow>(rankedWaitsQuery(this.#d, filter, options, now, read)), bounded);
    if (exact !== null) return exact;
    const buckets = this.#d.sortedWaits
      ? waitBucketsOfSqlite(await this.#x.get<SqliteWaitBucketsRow>(sqliteWaitBucketsQuery(filter, options.groupBy, now)))
      : await this.#x.all<WaitBucketRow>(waitBucketsQuery(this.#d, filter, options.groupBy, now));
    return percentilesOfBuckets(buckets, options);
  }

  async trends(
    filter: WorkloadFilter,
    options: { groupBy: StatsGroupKey | null; interval: TrendInterval },
    now: number,
  ): Promise<TrendsResult> {
    const rows = await this.#x.all<TrendRow>(trendQuery(this.#d, filter, { ...options, now }));
    return { series: trendResult(rows, options.interval), stats: statsOfTrendRows(rows, options.groupBy) };
  }

  async rankByGpuHours(filter: WorkloadFilter, options: ranking.RankingOptions): Promise<GpuHoursRanking> {
    return this.rankingOf(filter, options, ranking.rankingSource(filter));
  }

  /** The ranking from the given source; public so that tests can compare the two. */
  async rankingOf(filter: WorkloadFilter, options: ranking.RankingOptions, source: ranking.RankingSource): Promise<GpuHoursRanking> {
    const d = this.#d;
    return this.#x.snapshot(async (r) => {
      const top =
        source === 'rollups'
          ? ranking.topOf(await this.#gpuHoursCandidates(r, filter, options), options)
          : await r.all<ranking.Ranked>(ranking.rawTopQuery(d, filter, options));
      const count =
        source === 'rollups' ? ranking.totalsCountQuery(d, filter, options.now) : ranking.rawCountQuery(d, filter, options.now);
      const overall = await r.get<ranking.RankingOverall>(count);
      return ranking.rankingResult(top, overall ?? { n: 0, gpu_hours: 0 }, await this.#about(r, top));
    });
  }

  async rankByQueue(filter: WorkloadFilter, options: ranking.RankingOptions): Promise<QueueRanking> {
    return this.queueRankingOf(filter, options, ranking.rankingSource(filter));
  }

  /** The queue ranking from the given source; public so that tests can compare the two. */
  async queueRankingOf(filter: WorkloadFilter, options: ranking.RankingOptions, source: ranking.RankingSource): Promise<QueueRanking> {
    const d = this.#d;
    return this.#x.snapshot(async (r) => {
      const top =
        source === 'rollups'
          ? queueRanking.topQueues(await this.#queueCandidates(r, filter, options), options)
          : await r.all<queueRanking.QueueCandidate>(queueRanking.rawQueueTopQuery(d, filter, options));
      const count =
        source === 'rollups'
          ? queueRanking.totalsQueueQuery(d, filter, options.now)
          : queueRanking.rawQueueCountQuery(d, filter, options.now);
      const overall = await r.get<queueRanking.QueueOverall>(count);
      return queueRanking.queueRankingResult(top, overall ?? { n: 0, queue_ms: 0 }, await this.#about(r, top));
    });
  }

  async rankByUsage(filter: WorkloadFilter, options: usageRanking.UsageRankingOptions): Promise<UsageRanking> {
    const d = this.#d;
    return this.#x.snapshot(async (r) => {
      const candidates = d.inProcess
        ? await this.#eachTeam<usageRanking.UsageCandidate>(r, {
          filter,
          teamTopSql: usageRanking.teamTopSql(d, filter, options, '@team'),
          params: usageRanking.topParams(filter, options),
        })
        : await r.all<usageRanking.UsageCandidate>(usageRanking.teamTopsQuery(d, filter, options));
      const overall = await r.get<usageRanking.UsageOverall>(usageRanking.usageOverallQuery(d, filter));
      return usageRanking.usageRankingResult(candidates, overall ?? { n: 0, idle_seconds: 0, util_weighted: 0, util_seconds: 0 }, options);
    });
  }

  async describe(workloadIds: readonly string[], filter: WorkloadFilter): Promise<Described> {
    const described: Described = new Map();
    if (workloadIds.length === 0) return described;
    const query = describeQuery(this.#d, filter);
    const rows = await this.#x.all<Pick<WorkloadRow, 'workload_id' | 'name' | 'initiative_id'>>({
      sql: query.sql, params: { ...query.params, ids: this.#d.listValue(workloadIds) },
    });
    for (const row of rows) described.set(row.workload_id, { name: row.name, initiativeId: row.initiative_id });
    return described;
  }

  async pricedUsage(
    filter: WorkloadFilter,
    spans: readonly { from: number; to: number }[],
    options: PricedUsageOptions = {},
  ): Promise<PricedUsageRow[]> {
    const queries = pricedUsageQueries(this.#d, filter, spans, options);
    if (queries.length === 0) return [];
    const results = await this.#x.snapshot(async (r) => {
      const done: PricedUsageSqlRow[][] = [];
      for (const query of queries) done.push(await r.all<PricedUsageSqlRow>(query));
      return done;
    });
    return pricedUsageRows(results, options);
  }

  async usage(filter: WorkloadFilter, window: UsageWindow): Promise<UsageBreakdown> {
    return this.usageFrom(filter, window, 'any');
  }

  /** usage from the given source ('rows' keeps usage since ever off the rollups); public so that tests can compare the two. */
  async usageFrom(filter: WorkloadFilter, window: UsageWindow, source: UsageSource): Promise<UsageBreakdown> {
    const queries = usageQueries(this.#d, filter, { window, source });
    if (queries.length === 0) return usageBreakdown([]);
    const results = await this.#x.snapshot(async (r) => {
      const done: { rows: UsageRow[]; sign: 1 | -1 }[] = [];
      for (const query of queries) done.push({ rows: await r.all<UsageRow>(query), sign: query.sign });
      return done;
    });
    return usageBreakdown(results);
  }

  async activeGpus(filter: WorkloadFilter): Promise<number> {
    return (await this.#x.get<{ gpus: number }>(activeGpusQuery(this.#d, filter)))?.gpus ?? 0;
  }

  async teamCounts(): Promise<TeamCounts> {
    const { statuses, gpus } = await this.#x.snapshot(async (r) => ({
      statuses: await r.all<TeamStatusRow>({ sql: teamStatusCountsSql(this.#d), params: {} }),
      gpus: await r.all<TeamGpusRow>({ sql: teamActiveGpusSql(this.#d), params: {} }),
    }));
    return teamCountsOf(statuses, gpus);
  }

  /** The key the opener made (sql/service-secrets.ts); an opener that holds it answers without this read. */
  async cursorKey(): Promise<Uint8Array> {
    this.#cursorKey ??= this.#x.get<SecretRow>({ sql: SECRET_SQL, params: { name: CURSOR_KEY_SECRET } }).then((row) => {
      if (row === undefined) throw missingSecretError(CURSOR_KEY_SECRET);
      return new Uint8Array(row.value);
    });
    // A failed read is not kept: the next call tries again.
    this.#cursorKey.catch(() => {
      this.#cursorKey = undefined;
    });
    return this.#cursorKey;
  }

  /** The rows alone do not say how long they are kept: the opener that knows answers (read-methods.ts, withIndexTerms). */
  async retentionDays(): Promise<number | null> {
    return null;
  }

  async fleetHistory(query: FleetHistoryQuery): Promise<FleetHistoryRow[]> {
    return (await this.#x.all<FleetHistorySqlRow>(fleetHistoryQuery(this.#d, query))).map(fleetHistoryRow);
  }

  /** In the process: each sought team's page, merged, then the count on its own. */
  async #pageApart(filter: WorkloadFilter, after: Keyset | null, wanted: number): Promise<{ rows: WorkloadRow[]; totalCount: number }> {
    return this.#x.snapshot(async (r) => {
      const pageOf = async (of: WorkloadFilter) => {
        const query = listQuery(this.#d, of, after);
        return r.all<WorkloadRow>({ sql: query.sql, params: { ...query.params, limit: wanted } });
      };
      const teams = teamsToSeek(filter);
      let rows: WorkloadRow[];
      if (teams === null) rows = await pageOf(filter);
      else {
        const pages: WorkloadRow[][] = [];
        for (const team of teams) pages.push(await pageOf(teamFilter(filter, team)));
        rows = mergeTeamPages(pages, wanted);
      }
      return { rows, totalCount: (await r.get<{ n: number }>(countQuery(this.#d, filter)))?.n ?? 0 };
    });
  }

  /**
   * A round trip away: the page (every sought team's in one statement) and its count in one statement.
   * The teams' seek unnests a list whose length only a plan for its values knows: on a reused plan it
   * runs on its generic plan by force, in a snapshot of its own.
   */
  async #pageWithCount(filter: WorkloadFilter, after: Keyset | null, wanted: number): Promise<{ rows: WorkloadRow[]; totalCount: number }> {
    const d = this.#d;
    const teams = teamsToSeek(filter);
    const pageQuery = teams === null ? listQuery(d, filter, after) : teamSeeksQuery(d, filter, { teams, after });
    const count = countQuery(d, filter);
    const query = withCount(pageQuery, count, rowsToRead(wanted));
    const reusable = d.reusableListPlan(filter, teams);
    const rows =
      reusable && teams !== null
        ? await this.#x.snapshot((r) => r.all<PageRow>(query, { reusable }), { genericPlans: true })
        : await this.#x.all<PageRow>(query, { reusable });
    // An empty page (nothing matches, or a cursor past the end) carries no count: asked on its own.
    const totalCount = rows[0]?.list_total_count ?? (await this.#x.get<{ n: number }>(count, { reusable }))?.n ?? 0;
    return { rows, totalCount };
  }

  /** The finished workloads' top of every (initiative, status) pair, then the unfinished top. */
  async #gpuHoursCandidates(r: SqlReader, filter: WorkloadFilter, options: ranking.RankingOptions): Promise<ranking.Ranked[]> {
    const d = this.#d;
    const pair = { initiative: '@initiative', status: '@status', order: options.order };
    const finished = d.inProcess
      ? await this.#eachPair<ranking.Ranked>(r, { filter, pairTopSql: ranking.finishedTopSql(d, pair), limit: options.limit })
      : await r.all<ranking.Ranked>(ranking.finishedTopsQuery(d, filter, options));
    return [...finished, ...(await r.all<ranking.Ranked>(ranking.unfinishedTopQuery(d, filter, options)))];
  }

  /** The ended waits' top of every (initiative, status) pair, then the waiting top. */
  async #queueCandidates(r: SqlReader, filter: WorkloadFilter, options: ranking.RankingOptions): Promise<queueRanking.QueueCandidate[]> {
    const d = this.#d;
    const pair = { initiative: '@initiative', status: '@status', order: options.order };
    const ended = d.inProcess
      ? await this.#eachPair<queueRanking.QueueCandidate>(r, {
        filter,
        pairTopSql: queueRanking.endedTopSql(d, pair),
        limit: options.limit,
      })
      : await r.all<queueRanking.QueueCandidate>(queueRanking.endedTopsQuery(d, filter, options));
    return [...ended, ...(await r.all<queueRanking.QueueCandidate>(queueRanking.waitingTopQuery(d, filter, options)))];
  }

  /**
   * `pairTopSql` (parameters @org, @initiative, @status, @limit) run for each (initiative, status) pair
   * of the filter that has workloads.
   */
  async #eachPair<Row extends object>(
    r: SqlReader,
    seek: { filter: WorkloadFilter; pairTopSql: string; limit: number },
  ): Promise<Row[]> {
    const { filter, pairTopSql, limit } = seek;
    const pairs = await r.all<{ initiative_id: string; status: string }>(ranking.rankedPairsQuery(this.#d, filter));
    const org = filter.scope.organizationId;
    return r.allEach<Row>(pairTopSql, pairs.map((pair) => ({ org, initiative: pair.initiative_id, status: pair.status, limit })));
  }

  /** `teamTopSql` (parameter @team beside `params`) run for each team of the filter that has workloads. */
  async #eachTeam<Row extends object>(
    r: SqlReader,
    seek: { filter: WorkloadFilter; teamTopSql: string; params: SqlParams },
  ): Promise<Row[]> {
    const { filter, teamTopSql, params } = seek;
    const teams = await r.all<{ initiative_id: string }>(usageRanking.rankedTeamsQuery(this.#d, filter));
    return r.allEach<Row>(teamTopSql, teams.map(({ initiative_id: team }) => ({ ...params, team })));
  }

  /** Name and initiative of the winners, by the dialect's row id. */
  async #about(r: SqlReader, top: readonly { id: number | string }[]): Promise<ranking.RankedAbout[]> {
    if (top.length === 0) return [];
    const query: SqlQuery = ranking.rankedAboutQuery(this.#d, top.map((row) => row.id));
    return r.all<ranking.RankedAbout>(query);
  }
}
