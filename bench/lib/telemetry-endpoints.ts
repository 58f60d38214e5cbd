// Part 3 of the telemetry benchmark: latency of the metrics endpoints with a full day of telemetry.
// The service runs in this process (startService) on a fixed clock; its telemetry learns the GPU pods
// through attach() and takes 24 h of exporter payloads through ingest(), as if scraped; the workloads
// are written to its index. Requests then go over HTTP, one at a time on one keep-alive connection
// (bench/lib/load.ts): the client shares the event loop, which adds its own share (~0.1 ms) to each
// figure but never queues a request behind another.
//
// Loading history: every 15 s for 24 h would be 5,760 payloads per exporter. Instead: one payload
// every 5 minutes from 24 h ago to 1 h ago (one sample in each 5-minute bucket: the 24-hour tier is
// full), then every 15 s for the last hour (the raw ring is full, and the last 60 one-minute buckets).
// Between 6 h and 1 h ago only every fifth one-minute bucket holds a sample, so last_6h reads all 360
// slots of that tier but sums 120 buckets rather than 360: its figure is a little low.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sequentialRun, type RunResult } from './load.js';
import { CLUSTER_ID, GPUS_PER_NODE, exporterTargetOf, gpuPodOf, planCluster, simNodeOf, workloadRecordsOf, type ClusterPlan } from './telemetry-cluster.js';
import { PayloadTemplate, gpuValueTexts } from './telemetry-payloads.js';
import { findGc } from './telemetry-rings.js';
import { startBenchService, type BenchService } from './telemetry-service.js';

const MINUTE_MS = 60_000;
const HOUR_SECONDS = 3_600;
const DAY_SECONDS = 86_400;
const COARSE_STEP_SECONDS = 300;
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
  path: string;
  /** The perf issue's p99 target (ms), informational. */
  targetP99Ms: number | null;
  sequential: RunResult;
}

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
    bench.service.store.upsertWorkloads(records);
    bench.service.store.upsertPodIntervals(intervals);
    const attached = bench.telemetry.attach({ clusterId: CLUSTER_ID });
    attached.onEvent('pods', { type: 'SYNC', items: plan.nodes.map(gpuPodOf) }, undefined);
    const load = await loadHistory(bench, plan, now / 1000, log);
    findGc().gc?.();
    const telemetry = bench.telemetry.stats();
    const serviceMemory = process.memoryUsage();
    log(`  endpoints: ${load.payloads.toLocaleString('en-US')} payloads ingested in ${load.seconds.toFixed(1)} s (${load.microsPerPayload} µs each); ` +
      `${telemetry.gpus} GPUs, ${telemetry.workloads} workloads, rings ${(telemetry.ringBytes / 1024 ** 2).toFixed(0)} MiB, heap ${(serviceMemory.heapUsed / 1024 ** 2).toFixed(0)} MiB`);

    const metrics = (id: string, range: string) => `/v1/workloads/${id}/metrics?time_range=${range}`;
    const bigGpus = bigJob.pods * GPUS_PER_NODE;
    const scenarios = [
      { name: `metrics ${bigGpus}-GPU job last_1h`, path: metrics(bigJob.workloadId, 'last_1h'), targetP99Ms: null },
      { name: `metrics ${bigGpus}-GPU job last_6h`, path: metrics(bigJob.workloadId, 'last_6h'), targetP99Ms: null },
      { name: `metrics ${bigGpus}-GPU job last_24h`, path: metrics(bigJob.workloadId, 'last_24h'), targetP99Ms: 10 },
      { name: `metrics ${bigGpus}-GPU job job_lifetime`, path: metrics(bigJob.workloadId, 'job_lifetime'), targetP99Ms: null },
      ...(smallJob === undefined ? [] : [{ name: 'metrics 8-GPU job last_24h', path: metrics(smallJob.workloadId, 'last_24h'), targetP99Ms: null }]),
      { name: 'ranking gpu_utilization limit 10', path: '/v1/workloads/metrics?sort_by=gpu_utilization&limit=10', targetP99Ms: 20 },
      { name: 'ranking power_usage limit 100', path: '/v1/workloads/metrics?sort_by=power_usage&limit=100', targetP99Ms: 20 },
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
      log(`  ${scenario.name}: p50 ${sequential.p50.toFixed(2)} ms, p99 ${sequential.p99.toFixed(2)} ms, max ${sequential.max.toFixed(2)} ms (n=${sequential.requests}` +
        `${sequential.non2xx + sequential.errors > 0 ? `, ${sequential.non2xx} non-2xx, ${sequential.errors} errors` : ''})`);
      results.push({ ...scenario, sequential });
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

/** Every exporter's payloads, oldest first, each stored as sampled at its time: see the scheme above. */
async function loadHistory(bench: BenchService, plan: ClusterPlan, nowSeconds: number, log: (line: string) => void): Promise<EndpointResult['load']> {
  const times: number[] = [];
  for (let t = nowSeconds - DAY_SECONDS + COARSE_STEP_SECONDS; t <= nowSeconds - HOUR_SECONDS; t += COARSE_STEP_SECONDS) times.push(t);
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
    if ((step + 1) % 129 === 0) log(`  endpoints: loading, ${step + 1} of ${times.length} steps`);
  }
  const seconds = (performance.now() - began) / 1000;
  return {
    payloads,
    samplesPerPayload: Math.round(samples / Math.max(1, payloads)),
    stepsPerExporter: times.length,
    seconds: Math.round(seconds * 10) / 10,
    microsPerPayload: Math.round((ingestMs * 1000) / Math.max(1, payloads)),
    scheme: `every ${COARSE_STEP_SECONDS} s from 24 h to 1 h ago, then every ${RAW_STEP_SECONDS} s for the last hour (7-field payloads)`,
  };
}
