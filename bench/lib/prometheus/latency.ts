// The request pairs of the side-by-side benchmark: our endpoint and the PromQL that answers the same
// question, checked once for agreement and then timed in turns (one request to each, each side on its
// own keep-alive connection: interleaved.ts), with the client in this process for both.
import type { MetricName } from '../../../src/domain/metrics.js';
import type { RunResult } from '../measure/load.js';
import type { BenchService } from '../telemetry/service.js';
import { interleavedRun } from './interleaved.js';
import { compareMetrics, compareRankings, jobSelector, podRankingQuery, rankingQuery, workloadMetricsQuery, type MetricsComparison, type RankingComparison, type Stat } from './queries.js';
import { queryPath, type PrometheusServer } from './server.js';

export interface PairSettings {
  requests: number;
  warmup: number;
  /** Upper bound of one pair's turns, once `minRequests` are done. */
  maxSeconds: number;
  minRequests: number;
}

export interface PairResult {
  name: string;
  ours: { path: string; sequential: RunResult } | null;
  /** `stats`: Prometheus' own timings of one more evaluation, to tell its engine from the HTTP round trip. */
  prometheus: { query: string; sequential: RunResult; stats: Record<string, unknown> };
  /** Prometheus p50 / our p50 and the same for p99: how many times longer Prometheus takes. */
  ratio: { p50: number; p99: number } | null;
}

export interface Answers {
  metrics: MetricsComparison;
  ranking: RankingComparison;
}

export interface PairsOptions {
  bench: BenchService;
  prometheus: PrometheusServer;
  /** Evaluation time of every PromQL query (ms): after the freeze, so the window holds every sample. */
  at: number;
  job: { workloadId: string; gpus: number; namespace: string; podNamePattern: string };
  rankingLimit: number;
  settings: PairSettings;
  log: (line: string) => void;
}

const RANGE = '1h';

export function pairsOf(options: PairsOptions): { name: string; ours: string | null; query: string }[] {
  const { job, rankingLimit } = options;
  return [
    {
      name: `metrics ${job.gpus}-GPU job last_1h`,
      ours: `/v1/workloads/${job.workloadId}/metrics?time_range=last_1h`,
      query: workloadMetricsQuery(jobSelector(job.namespace, job.podNamePattern), RANGE),
    },
    { name: `ranking gpu_utilization limit ${rankingLimit}`, ours: `/v1/workloads/metrics?sort_by=gpu_utilization&limit=${rankingLimit}`, query: rankingQuery(rankingLimit, RANGE) },
    { name: `ranking by pod limit ${rankingLimit} (Prometheus only)`, ours: null, query: podRankingQuery(rankingLimit, RANGE) },
  ];
}

/** One answer of each side for the metrics and the ranking, and how they compare. */
export async function compareAnswers(options: PairsOptions): Promise<Answers> {
  const [metricsPair, rankingPair] = pairsOf(options);
  if (metricsPair?.ours == null || rankingPair?.ours == null) throw new Error('The side-by-side pairs lost their metrics or ranking request');
  const { bench, prometheus, at } = options;
  const ours = async (path: string) => {
    const response = await fetch(bench.url + path, { headers: bench.headers });
    if (response.status !== 200) throw new Error(`GET ${path} answered HTTP ${response.status}: ${await response.text()}`);
    return (await response.json()) as { data: Record<string, unknown> };
  };
  const metricsBody = (await ours(metricsPair.ours)) as { data: { metrics: Partial<Record<MetricName, Record<Stat, number | null>>> } };
  const metrics = compareMetrics(metricsBody.data.metrics, await prometheus.query(metricsPair.query, at));
  const rankingBody = (await ours(rankingPair.ours)) as { data: { workloads: { name: string; gpu_utilization?: { avg: number } }[] } };
  const theirs = await prometheus.query(rankingPair.query, at);
  const ranking = compareRankings(
    rankingBody.data.workloads.map((w) => ({ name: w.name, avg: w.gpu_utilization?.avg ?? NaN })),
    // topk's answer is not sorted: order it as our ranking (value descending, then name).
    theirs.map((s) => ({ name: s.metric['workload'] ?? '', avg: s.value })).sort((a, b) => b.avg - a.avg || (a.name < b.name ? -1 : 1)),
  );
  return { metrics, ranking };
}

export async function measurePairs(options: PairsOptions): Promise<PairResult[]> {
  const { bench, prometheus, at, settings, log } = options;
  const results: PairResult[] = [];
  const describe = (r: RunResult) =>
    `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (n=${r.requests}${r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : ''})`;
  for (const pair of pairsOf(options)) {
    const promTarget = { url: prometheus.url, paths: [queryPath(pair.query, at)], headers: {} };
    const targets = pair.ours === null ? [promTarget] : [{ url: bench.url, paths: [pair.ours], headers: bench.headers }, promTarget];
    const runs = await interleavedRun(targets, settings);
    const theirRun = runs.at(-1);
    if (theirRun === undefined) throw new Error(`No measurement of ${pair.name}`);
    const ours = pair.ours === null || runs.length < 2 || runs[0] === undefined ? null : { path: pair.ours, sequential: runs[0] };
    const theirs = { query: pair.query, sequential: theirRun, stats: await prometheus.queryStats(pair.query, at) };
    const ratio = ours === null ? null : { p50: ratioOf(theirs.sequential.p50, ours.sequential.p50), p99: ratioOf(theirs.sequential.p99, ours.sequential.p99) };
    const engine = (theirs.stats['timings'] as { execTotalTime?: number } | undefined)?.execTotalTime;
    log(`  ${pair.name}: ours ${ours === null ? 'n/a' : describe(ours.sequential)}; Prometheus ${describe(theirs.sequential)}` +
      `${engine === undefined ? '' : `, engine ${(engine * 1000).toFixed(2)} ms of one`}${ratio === null ? '' : `; ratio p50 ${ratio.p50}×, p99 ${ratio.p99}×`}`);
    results.push({ name: pair.name, ours, prometheus: theirs, ratio });
  }
  return results;
}

function ratioOf(theirs: number, ours: number): number {
  return ours <= 0 ? 0 : Math.round((theirs / ours) * 10) / 10;
}
