// Part 3 of the telemetry benchmark: latency of the metrics endpoints with a full day of telemetry.
// The service runs in this process (startService) on a fixed clock; its telemetry learns the GPU pods
// through attach() and takes 24 h of exporter payloads through ingest(), as if scraped; the workloads
// are written to its index. Requests then go over HTTP, one at a time on one keep-alive connection
// (bench/lib/measure/load.ts): the client shares the event loop, which adds its own share (~0.1 ms) to each
// figure but never queues a request behind another.
//
// Loading history: every 15 s for 24 h would be 5,760 payloads per exporter. Instead: one payload
// every 15 minutes from 24 h to 6 h ago (every hour slot holds samples, every third 5-minute bucket),
// every 5 minutes from 6 h to 1 h ago (every 5-minute bucket, every fifth one-minute bucket), then
// every 15 s for the last hour (the raw ring is full, and the last 60 one-minute buckets). A read
// visits every slot of the tiers it uses whether or not it holds a sample, so the walks cost what
// they would; the sums skip empty buckets, so last_6h and last_24h come out a little cheaper than
// with every bucket full. 372 payloads per exporter instead of 516 keep the run within 15 minutes.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { METRIC_NAMES, type MetricsTimeRange, type RankedMetricName } from '../../../src/domain/metrics.js';
import { rankWorkloads } from '../../../src/query/ranking.js';
import { workloadMetrics } from '../../../src/query/workload-metrics.js';
import { sequentialRun, timeCalls, type LatencySummary, type RunResult } from '../measure/load.js';
import { CLUSTER_ID, GPUS_PER_NODE, ORGANIZATION, exporterTargetOf, gpuPodOf, planCluster, simNodeOf, workloadRecordsOf, type ClusterPlan } from './cluster.js';
import { PayloadTemplate, gpuValueTexts } from './payloads.js';
import { findGc } from './rings.js';
import { startBenchService, type BenchService } from './service.js';

const MINUTE_MS = 60_000;
const HOUR_SECONDS = 3_600;
const DAY_SECONDS = 86_400;
const OLDEST_STEP_SECONDS = 900;
const COARSE_STEP_SECONDS = 300;
const SIX_HOURS_SECONDS = 6 * 3_600;
const RAW_STEP_SECONDS = 15;

export interface EndpointSettings {
  nodes: number;
  bigJobNodes: number;
  /** Measured requests per scenario (after `warmup` unmeasured ones). */
  requests: number;
  warmup: number;
}

export interface EndpointScenario {
  name: string;
  kind: 'metrics' | 'ranking';
  path: string;
  /** The perf issue's p99 target (ms), informational. */
  targetP99Ms: number | null;
  sequential: RunResult;
  /**
   * The same request without HTTP, in this process: `query` is the read side's function (telemetry and
   * index), `telemetry` the telemetry port's call alone. Tells the ring walk from the rest of a request.
   */
  inProcess: { query: LatencySummary; telemetry: LatencySummary };
}

/** What a scenario asks, for the in-process calls. */
type ScenarioCall = { kind: 'metrics'; workloadId: string; range: MetricsTimeRange } | { kind: 'ranking'; metric: RankedMetricName; limit: number };

export interface EndpointResult {
  gpus: number;
  workloads: number;
  bigJob: { workloadId: string; gpus: number };
  load: { payloads: number; samplesPerPayload: number; stepsPerExporter: number; seconds: number; microsPerPayload: number; scheme: string };
  telemetry: { gpus: number; attributedGpus: number; workloads: number; ringBytes: number; exporters: number; gpuPods: number };
  serviceMemory: NodeJS.MemoryUsage;
  /** What each scenario answered once before the runs: what the figures were measured over. */
  answers: Record<string, unknown>;
  /** Answers that show the data is not there (a null average, a short ranking): each makes the figures invalid. */
  problems: string[];
  scenarios: EndpointScenario[];
}

export async function measureEndpoints(settings: EndpointSettings, log: (line: string) => void): Promise<EndpointResult> {
  const plan = planCluster(settings.nodes, { bigJobNodes: settings.bigJobNodes });
  const { bigJob } = plan;
  if (bigJob === undefined) throw new Error('The endpoint part needs the big job: bigJobNodes must be above 0');
  const smallJob = plan.workloads.find((w) => w !== bigJob);
  const now = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
  const bench = await startBenchService({ env: { GPUCAP_SCRAPE_INTERVAL_SECONDS: String(RAW_STEP_SECONDS) }, clock: { now: () => now } });
  try {
    const { records, intervals } = workloadRecordsOf(plan, now - 30 * HOUR_SECONDS * 1000);
    await bench.service.store.upsertWorkloads(records);
    await bench.service.store.upsertPodIntervals(intervals);
    const attached = bench.telemetry.attach({ clusterId: CLUSTER_ID });
    attached.onEvent('pods', { type: 'SYNC', items: plan.nodes.map(gpuPodOf) }, undefined);
    const load = await loadHistory(bench, plan, now / 1000, log);
    findGc().gc?.();
    const telemetry = bench.telemetry.stats();
    const serviceMemory = process.memoryUsage();
    log(`  endpoints: ${load.payloads.toLocaleString('en-US')} payloads ingested in ${load.seconds.toFixed(1)} s (${load.microsPerPayload} µs each); ` +
      `${telemetry.gpus} GPUs, ${telemetry.workloads} workloads, rings ${(telemetry.ringBytes / 1024 ** 2).toFixed(0)} MiB, heap ${(serviceMemory.heapUsed / 1024 ** 2).toFixed(0)} MiB`);

    const bigGpus = bigJob.pods * GPUS_PER_NODE;
    const metrics = (name: string, workloadId: string, range: MetricsTimeRange, targetP99Ms: number | null) => ({
      name, kind: 'metrics' as const, path: `/v1/workloads/${workloadId}/metrics?time_range=${range}`, targetP99Ms, call: { kind: 'metrics', workloadId, range } as ScenarioCall,
    });
    const ranking = (metric: RankedMetricName, limit: number) => ({
      name: `ranking ${metric} limit ${limit}`, kind: 'ranking' as const, path: `/v1/workloads/metrics?sort_by=${metric}&limit=${limit}`, targetP99Ms: 20,
      call: { kind: 'ranking', metric, limit } as ScenarioCall,
    });
    const scenarios = [
      metrics(`metrics ${bigGpus}-GPU job last_1h`, bigJob.workloadId, 'last_1h', null),
      metrics(`metrics ${bigGpus}-GPU job last_6h`, bigJob.workloadId, 'last_6h', null),
      metrics(`metrics ${bigGpus}-GPU job last_24h`, bigJob.workloadId, 'last_24h', 10),
      metrics(`metrics ${bigGpus}-GPU job job_lifetime`, bigJob.workloadId, 'job_lifetime', null),
      ...(smallJob === undefined ? [] : [metrics('metrics 8-GPU job last_24h', smallJob.workloadId, 'last_24h', null)]),
      ranking('gpu_utilization', 10),
      ranking('memory_utilization', 20),
      ranking('power_usage', 100),
    ];
    const answers: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const scenario of scenarios) {
      const response = await fetch(bench.url + scenario.path, { headers: bench.headers });
      const body = (await response.json()) as { data?: { metrics?: Record<string, { avg: number | null }>; workloads?: unknown[] }; metadata?: { total_count?: number } };
      answers[scenario.name] = scenario.path.includes('sort_by') ? { first: body.data?.workloads?.[0], total_count: body.metadata?.total_count } : body.data?.metrics;
      if (response.status !== 200) problems.push(`${scenario.name}: HTTP ${response.status}`);
      else if (body.data?.metrics !== undefined && Object.values(body.data.metrics).some((m) => m.avg === null)) problems.push(`${scenario.name}: a metric without samples`);
      else if (body.metadata?.total_count !== undefined && body.metadata.total_count !== plan.workloads.length) {
        problems.push(`${scenario.name}: ${body.metadata.total_count} workloads ranked, expected ${plan.workloads.length}`);
      }
    }

    const results: EndpointScenario[] = [];
    for (const scenario of scenarios) {
      const target = { url: bench.url, paths: [scenario.path], headers: bench.headers };
      await sequentialRun(target, { maxRequests: settings.warmup, minRequests: settings.warmup, maxSeconds: 60 });
      const sequential = await sequentialRun(target, { maxRequests: settings.requests, minRequests: settings.requests, maxSeconds: 120 });
      const inProcess = await measureInProcess(bench, scenario.call, { requests: settings.requests, warmup: settings.warmup, now });
      log(`  ${scenario.name}: p50 ${sequential.p50.toFixed(2)} ms, p99 ${sequential.p99.toFixed(2)} ms, max ${sequential.max.toFixed(2)} ms (n=${sequential.requests}` +
        `${sequential.non2xx + sequential.errors > 0 ? `, ${sequential.non2xx} non-2xx, ${sequential.errors} errors` : ''}); ` +
        `in process: query p50 ${inProcess.query.p50.toFixed(2)} / p99 ${inProcess.query.p99.toFixed(2)} ms, telemetry p50 ${inProcess.telemetry.p50.toFixed(2)} / p99 ${inProcess.telemetry.p99.toFixed(2)} ms`);
      results.push({ name: scenario.name, kind: scenario.kind, path: scenario.path, targetP99Ms: scenario.targetP99Ms, sequential, inProcess });
    }
    attached.detach();
    return {
      gpus: settings.nodes * GPUS_PER_NODE,
      workloads: plan.workloads.length,
      bigJob: { workloadId: bigJob.workloadId, gpus: bigGpus },
      load,
      telemetry,
      serviceMemory,
      answers,
      problems,
      scenarios: results,
    };
  } finally {
    await bench.stop();
  }
}

const ADMIN_SCOPE = { organizationId: ORGANIZATION, initiatives: null };

/** The scenario's request made `requests` times in this process, once through the query function, once through the telemetry port alone. */
async function measureInProcess(
  bench: BenchService,
  call: ScenarioCall,
  options: { requests: number; warmup: number; now: number },
): Promise<EndpointScenario['inProcess']> {
  const deps = { index: bench.service.index, telemetry: bench.telemetry };
  const { now } = options;
  let query: () => Promise<unknown>;
  let telemetry: () => Promise<unknown>;
  if (call.kind === 'metrics') {
    const request = { workloadId: call.workloadId, timeRange: call.range };
    const workload = await bench.service.index.get(call.workloadId, now);
    if (workload === undefined) throw new Error(`The bench workload "${call.workloadId}" is not in the index`);
    const hours: Record<MetricsTimeRange, number> = { last_1h: 1, last_6h: 6, last_24h: 24, job_lifetime: 0 };
    const window = call.range === 'job_lifetime' ? { from: workload.startedAt ?? workload.submittedAt, to: now } : { from: now - hours[call.range] * HOUR_SECONDS * 1000, to: now };
    query = () => workloadMetrics(deps, ADMIN_SCOPE, request, now);
    telemetry = () => bench.telemetry.summarize({ workload, window, lifetime: call.range === 'job_lifetime', metrics: METRIC_NAMES });
  } else {
    query = () => rankWorkloads(deps, ADMIN_SCOPE, { sortBy: call.metric, order: 'desc', limit: call.limit }, now);
    telemetry = () => bench.telemetry.lastHour(call.metric, now);
  }
  const time = (fn: () => Promise<unknown>): Promise<LatencySummary> => timeCalls(fn, { runs: options.requests, warmup: options.warmup });
  return { query: await time(query), telemetry: await time(telemetry) };
}

/** Every exporter's payloads, oldest first, each stored as sampled at its time: see the scheme above. */
async function loadHistory(bench: BenchService, plan: ClusterPlan, nowSeconds: number, log: (line: string) => void): Promise<EndpointResult['load']> {
  const times: number[] = [];
  for (let t = nowSeconds - DAY_SECONDS + OLDEST_STEP_SECONDS; t <= nowSeconds - SIX_HOURS_SECONDS; t += OLDEST_STEP_SECONDS) times.push(t);
  for (let t = nowSeconds - SIX_HOURS_SECONDS + COARSE_STEP_SECONDS; t <= nowSeconds - HOUR_SECONDS; t += COARSE_STEP_SECONDS) times.push(t);
  for (let t = nowSeconds - HOUR_SECONDS + RAW_STEP_SECONDS; t <= nowSeconds; t += RAW_STEP_SECONDS) times.push(t);
  const exporters = plan.nodes.map((node) => ({ node, template: new PayloadTemplate(simNodeOf(node)), target: exporterTargetOf(node) }));
  let payloads = 0;
  let samples = 0;
  let ingestMs = 0;
  const began = performance.now();
  for (const [step, time] of times.entries()) {
    for (const { node, template, target } of exporters) {
      const values = Array.from({ length: template.gpuCount }, (_, gpu) => gpuValueTexts(node.firstGpu + gpu, node.workload.ordinal, time));
      const text = template.render(values);
      const at = performance.now();
      samples += bench.telemetry.ingest(target, text, time * 1000).samples;
      ingestMs += performance.now() - at;
      payloads += 1;
    }
    // Lets the service's timers run (the sampler's empty ticks, the lifetime flush) as they would.
    await yieldToLoop();
    if ((step + 1) % 93 === 0) log(`  endpoints: loading, ${step + 1} of ${times.length} steps`);
  }
  const seconds = (performance.now() - began) / 1000;
  return {
    payloads,
    samplesPerPayload: Math.round(samples / Math.max(1, payloads)),
    stepsPerExporter: times.length,
    seconds: Math.round(seconds * 10) / 10,
    microsPerPayload: Math.round((ingestMs * 1000) / Math.max(1, payloads)),
    scheme: `every ${OLDEST_STEP_SECONDS} s from 24 h to 6 h ago, every ${COARSE_STEP_SECONDS} s from 6 h to 1 h ago, then every ${RAW_STEP_SECONDS} s for the last hour (7-field payloads)`,
  };
}
