// Side by side with Prometheus (perf issue, "same data, one run"): Debian's Prometheus and our service
// scrape the same simulated dcgm-exporters (1,250 × 8 GPUs; --quick: 50 × 8) at the same interval for
// the same window, then the exporters stop so both hold exactly the same samples. Then:
//   answers   our /v1/workloads/{id}/metrics (last_1h) of the big Job and our gpu_utilization ranking
//             against the PromQL a user would write (avg/min/max/last_over_time over [1h], topk with
//             kube_pod_owner for Jobs): the largest difference, proof of "same data";
//   latency   each pair in turns (one request to each side, each on its own keep-alive connection, so
//             both meet the same load on a shared machine): p50/p99 and Prometheus ÷ ours;
//   memory    Prometheus' RSS growth per GPU and per series it holds, against our rings per GPU and
//             our process' RSS growth per GPU.
// The window is minutes, not the 24 h our rings are sized for: Prometheus' memory is measured with a
// few minutes of samples per series (its per-series cost dominates then), ours with the 24 h rings
// allocated up front. Writes bench/results/prometheus[.quick].json. Skipped, not failed, when no
// Prometheus binary can be had (bench/tools/ensure-prometheus.sh).
import { loadavg } from 'node:os';
import { relative } from 'node:path';
import { REPO_DIR, describeEnvironment, formatBytes, writeResults } from './lib/report/environment.js';
import { startKubeStateMetrics } from './lib/prometheus/kube-state-metrics.js';
import { compareAnswers, measurePairs, type Answers, type PairResult, type PairSettings } from './lib/prometheus/latency.js';
import { delta, per, readOurMemory, readPrometheusMemory, type OurMemory, type PrometheusMemory } from './lib/prometheus/memory.js';
import { ensurePrometheusBinary, startPrometheus, type PrometheusServer } from './lib/prometheus/server.js';
import { runWindow, type WindowResult } from './lib/prometheus/window.js';
import { CLUSTER_ID, GPUS_PER_NODE, exporterPodOf, gpuPodOf, planCluster, workloadRecordsOf } from './lib/telemetry/cluster.js';
import { startFleetProcess } from './lib/telemetry/fleet.js';
import { startBenchService } from './lib/telemetry/service.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { isEntryPoint } from './lib/report/format.js';

export const NAME = 'prometheus';

interface Settings {
  nodes: number;
  bigJobNodes: number;
  intervalSeconds: number;
  windowSeconds: number;
  rankingLimit: number;
  pairs: PairSettings;
}

const FULL: Settings = {
  nodes: 1_250,
  bigJobNodes: 64,
  // 5 s rather than the production 15 s: a window of 60 s then holds 12 samples per series. Kept short
  // so that the whole `npm run bench` fits in 15 minutes.
  intervalSeconds: 5,
  windowSeconds: 60,
  rankingLimit: 10,
  pairs: { requests: 200, minRequests: 10, warmup: 3, maxSeconds: 15 },
};

const QUICK: Settings = {
  nodes: 50,
  bigJobNodes: 16,
  intervalSeconds: 2,
  windowSeconds: 12,
  rankingLimit: 10,
  pairs: { requests: 30, minRequests: 5, warmup: 3, maxSeconds: 8 },
};

interface MemoryResult {
  gpus: number;
  ours: { before: OurMemory; after: OurMemory; ringBytes: number; ringBytesPerGpu: number; rssDeltaPerGpu: number; heapDeltaPerGpu: number; arrayBuffersDeltaPerGpu: number };
  prometheus: {
    before: PrometheusMemory;
    after: PrometheusMemory;
    /** After the latency runs: the queries' own allocations. */
    afterQueries: PrometheusMemory;
    rssDeltaPerGpu: number | null;
    rssDeltaPerSeries: number | null;
    heapInuseDeltaPerSeries: number | null;
    seriesPerGpu: number;
    /** Estimate: RSS Δ per series × the 7 fields our service reads, as if a metric_relabel_configs kept only those. */
    rssDeltaPerGpuReadFieldsOnly: number | null;
  };
  /** Prometheus RSS Δ per GPU ÷ ours (RSS Δ, and ring bytes). */
  ratio: { rssPerGpu: number | null; rssPerGpuToRingBytes: number | null };
}

export async function runPrometheusBench(options: { quick: boolean; log?: (line: string) => void }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  const resultsName = options.quick ? `${NAME}.quick` : NAME;
  const gpus = settings.nodes * GPUS_PER_NODE;
  log(`${NAME}: ${settings.nodes} exporters × ${GPUS_PER_NODE} GPUs, interval ${settings.intervalSeconds} s, window ${settings.windowSeconds} s${options.quick ? ' (quick)' : ''}; ` +
    `${environment.machine.cores} × ${environment.machine.cpuModel}, ${formatBytes(environment.machine.memoryBytes)}, Node ${environment.node}`);
  const [load1] = environment.loadAverageAtStart;
  if (load1 !== undefined && load1 > 1) log(`!!! WARNING: load average ${load1} before the start: other processes are busy and the figures will be noisy`);

  const binary = await ensurePrometheusBinary();
  if (!binary.ok) return skipped(resultsName, environment, settings, binary.reason, log);
  log(`  Prometheus ${binary.version} at ${binary.path}`);

  const plan = planCluster(settings.nodes, { bigJobNodes: settings.bigJobNodes });
  const { bigJob } = plan;
  if (bigJob === undefined) throw new Error('The Prometheus benchmark needs the big job: bigJobNodes must be above 0');
  const gpuPods = plan.nodes.map(gpuPodOf);
  const namespace = gpuPods[0]?.metadata?.namespace ?? '';

  const fleet = await startFleetProcess({ nodes: settings.nodes, bigJobNodes: settings.bigJobNodes });
  log(`  fleet of ${settings.nodes} exporters (pid ${fleet.pid}) on port ${fleet.port} after ${(fleet.startupMs / 1000).toFixed(1)} s`);
  const cleanups: (() => Promise<void>)[] = [() => fleet.stop()];
  try {
    const exporters = plan.nodes.map((node) => {
      const ip = fleet.ips.get(node.hostname);
      if (ip === undefined) throw new Error(`The exporter fleet reported no address for node "${node.hostname}"`);
      return { node, ip };
    });
    const ksm = await startKubeStateMetrics(gpuPods);
    cleanups.push(() => ksm.close());
    const bench = await startBenchService({
      env: { GPUCAP_EXPORTER_PORT: String(fleet.port), GPUCAP_SCRAPE_INTERVAL_SECONDS: String(settings.intervalSeconds) },
    });
    cleanups.push(() => bench.stop());
    const { records, intervals } = workloadRecordsOf(plan, Date.now() - 60_000);
    await bench.service.store.upsertWorkloads(records);
    await bench.service.store.upsertPodIntervals(intervals);

    let prometheus: PrometheusServer;
    try {
      prometheus = await startPrometheus({ binary: binary.path, intervalSeconds: settings.intervalSeconds, kubeStateMetrics: ksm.address });
    } catch (error) {
      return skipped(resultsName, environment, settings, (error as Error).message, log);
    }
    cleanups.push(() => prometheus.stop());
    log(`  Prometheus (pid ${prometheus.pid}) ready at ${prometheus.url}`);

    const ourBefore = readOurMemory();
    const prometheusBefore = await readPrometheusMemory(prometheus);
    const window = await runWindow({
      bench,
      prometheus,
      exporters: exporters.map(({ ip }) => `${ip}:${fleet.port}`),
      attach: () => {
        const attached = bench.telemetry.attach({ clusterId: CLUSTER_ID });
        attached.onEvent('pods', { type: 'SYNC', items: [...gpuPods, ...exporters.map(({ node, ip }) => exporterPodOf(node, ip))] }, undefined);
      },
      stopExporters: () => fleet.stop(),
      fleetCpuSeconds: () => fleet.cpuSeconds(),
      intervalSeconds: settings.intervalSeconds,
      windowSeconds: settings.windowSeconds,
      log,
    });
    log(`  window ${window.seconds} s: ours ${window.ours.scrapesPerExporter.min}–${window.ours.scrapesPerExporter.max} scrapes per exporter (${window.ours.failures} failures, CPU ${window.ours.cpuSeconds} s); ` +
      `Prometheus ${window.prometheus.samplesPerSeries.min}–${window.prometheus.samplesPerSeries.max} samples per series (${window.prometheus.targetsUp} of ${settings.nodes} targets up, CPU ${window.prometheus.cpuSeconds ?? 'n/a'} s); ` +
      `series: ${window.series.dcgm} DCGM, ${window.series.head} in the head`);

    const ourAfter = readOurMemory();
    const prometheusAfter = await readPrometheusMemory(prometheus);
    const stats = bench.telemetry.stats();

    const at = Date.now();
    const pairOptions = {
      bench,
      prometheus,
      at,
      job: { workloadId: bigJob.workloadId, gpus: bigJob.pods * GPUS_PER_NODE, namespace, podNamePattern: `${bigJob.name}-[0-9]+` },
      rankingLimit: settings.rankingLimit,
      settings: settings.pairs,
      log,
    };
    const answers = await compareAnswers(pairOptions);
    log(`  answers: metrics differ by at most ${answers.metrics.maxDifference} (${answers.metrics.mismatches.length} mismatches), ` +
      `ranking by at most ${answers.ranking.maxDifference} (${answers.ranking.mismatches.length} mismatches)`);
    const pairs = await measurePairs(pairOptions);
    const prometheusAfterQueries = await readPrometheusMemory(prometheus);

    const memory = memoryOf(gpus, stats.ringBytes, window, { before: ourBefore, after: ourAfter }, { before: prometheusBefore, after: prometheusAfter, afterQueries: prometheusAfterQueries });
    const problems = problemsOf(window, answers, stats.gpus, gpus);
    const requestErrors = problems.length + pairs.reduce((sum, p) => sum + p.prometheus.sequential.non2xx + p.prometheus.sequential.errors + (p.ours === null ? 0 : p.ours.sequential.non2xx + p.ours.sequential.errors), 0);
    const notes = notesOf(settings, binary.version, window, memory, problems);
    const results = {
      bench: NAME,
      ...environment,
      parameters: { quick: options.quick, ...settings, gpus, bigJob: { workloadId: bigJob.workloadId, name: bigJob.name, gpus: bigJob.pods * GPUS_PER_NODE } },
      // Relative to the repository (the cached build under bench/.cache), so the results name no path of this machine.
      prometheus: { version: binary.version, binary: relative(REPO_DIR, binary.path), flags: prometheus.flags, config: prometheus.config },
      service: 'in this process (startService): the real sampler scrapes the exporters over HTTP; pods declared through attach() + SYNC; workload rows written to its index',
      window,
      answers,
      pairs,
      memory,
      telemetry: stats,
      problems,
      notes,
      loadAverageAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
    };
    const resultsFile = writeResults(resultsName, results);
    log(`${NAME}: results written to ${resultsFile}`);
    return { name: NAME, resultsFile, requestErrors, table: tableOf(window, answers, pairs, memory), notes };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

function memoryOf(
  gpus: number,
  ringBytes: number,
  window: WindowResult,
  ours: { before: OurMemory; after: OurMemory },
  prometheus: { before: PrometheusMemory; after: PrometheusMemory; afterQueries: PrometheusMemory },
): MemoryResult {
  const ourRss = per(ours.after.rssBytes - ours.before.rssBytes, gpus) ?? 0;
  const promRss = delta(prometheus.before.rssBytes, prometheus.after.rssBytes);
  const promHeap = delta(prometheus.before.self['go_memstats_heap_inuse_bytes'], prometheus.after.self['go_memstats_heap_inuse_bytes']);
  const promRssPerGpu = per(promRss, gpus);
  const ringBytesPerGpu = Math.round(ringBytes / gpus);
  const ratio = (a: number | null, b: number) => (a === null || b <= 0 ? null : Math.round((a / b) * 10) / 10);
  return {
    gpus,
    ours: {
      ...ours,
      ringBytes,
      ringBytesPerGpu,
      rssDeltaPerGpu: ourRss,
      heapDeltaPerGpu: per(ours.after.heapUsedBytes - ours.before.heapUsedBytes, gpus) ?? 0,
      arrayBuffersDeltaPerGpu: per(ours.after.arrayBuffersBytes - ours.before.arrayBuffersBytes, gpus) ?? 0,
    },
    prometheus: {
      ...prometheus,
      rssDeltaPerGpu: promRssPerGpu,
      rssDeltaPerSeries: per(promRss, window.series.head),
      heapInuseDeltaPerSeries: per(promHeap, window.series.head),
      seriesPerGpu: Math.round((window.series.dcgm / gpus) * 10) / 10,
      rssDeltaPerGpuReadFieldsOnly: per(promRss === null ? null : (promRss * window.series.dcgmRead) / window.series.head, gpus),
    },
    ratio: { rssPerGpu: ratio(promRssPerGpu, ourRss), rssPerGpuToRingBytes: ratio(promRssPerGpu, ringBytesPerGpu) },
  };
}

/**
 * What makes the comparison invalid: counted as request errors, so the run fails loudly. A failed
 * scrape is not among them (a busy machine times some out): it only costs that side a sample, and the
 * answers' agreement still shows whether both hold the same data.
 */
function problemsOf(window: WindowResult, answers: Answers, ourGpus: number, gpus: number): string[] {
  const problems: string[] = [];
  if (ourGpus !== gpus) problems.push(`our telemetry holds ${ourGpus} GPUs, expected ${gpus}`);
  if (window.prometheus.gpus !== gpus) problems.push(`Prometheus holds ${window.prometheus.gpus} GPUs, expected ${gpus}`);
  if (window.ours.scrapesPerExporter.min < 2 || window.prometheus.samplesPerSeries.min < 2) problems.push('a side holds fewer than 2 samples per series: the window is too short');
  for (const mismatch of answers.metrics.mismatches) problems.push(`metrics answers differ: ${mismatch}`);
  for (const mismatch of answers.ranking.mismatches) problems.push(`ranking answers differ: ${mismatch}`);
  return problems;
}

function tableOf(window: WindowResult, answers: Answers, pairs: PairResult[], memory: MemoryResult): BenchOutcome['table'] {
  const n = (value: number | null) => (value === null ? 'n/a' : value.toLocaleString('en-US'));
  const ms = (value: number) => value.toFixed(2);
  const rows: string[][] = [
    ['window', 'samples per series (min–max)', `${window.ours.scrapesPerExporter.min}–${window.ours.scrapesPerExporter.max}`, `${window.prometheus.samplesPerSeries.min}–${window.prometheus.samplesPerSeries.max}`, ''],
    ['window', 'scraping CPU over the window (s)', window.ours.cpuSeconds.toFixed(2), window.prometheus.cpuSeconds === null ? 'n/a' : window.prometheus.cpuSeconds.toFixed(2), ''],
    ['answers', 'metrics: max |difference| (units)', '', String(answers.metrics.maxDifference), answers.metrics.mismatches.length === 0 ? 'agree' : 'DIFFER'],
    ['answers', 'ranking: max |difference| (%)', '', String(answers.ranking.maxDifference), answers.ranking.mismatches.length === 0 ? 'agree' : 'DIFFER'],
  ];
  for (const pair of pairs) {
    const theirs = pair.prometheus.sequential;
    const ours = pair.ours?.sequential;
    rows.push([pair.name, 'p50 / p99 (ms)', ours === undefined ? 'n/a' : `${ms(ours.p50)} / ${ms(ours.p99)}`, `${ms(theirs.p50)} / ${ms(theirs.p99)}`, pair.ratio === null ? '' : `${pair.ratio.p50}× / ${pair.ratio.p99}×`]);
  }
  rows.push(
    ['memory', 'RSS Δ per GPU (B)', n(memory.ours.rssDeltaPerGpu), n(memory.prometheus.rssDeltaPerGpu), memory.ratio.rssPerGpu === null ? '' : `${memory.ratio.rssPerGpu}×`],
    ['memory', 'ours: ring bytes per GPU (24 h); Prometheus: RSS Δ per GPU', n(memory.ours.ringBytesPerGpu), n(memory.prometheus.rssDeltaPerGpu), memory.ratio.rssPerGpuToRingBytes === null ? '' : `${memory.ratio.rssPerGpuToRingBytes}×`],
    ['memory', 'Prometheus RSS Δ per series held (B)', '', n(memory.prometheus.rssDeltaPerSeries), `${memory.prometheus.seriesPerGpu} DCGM series per GPU`],
    ['memory', 'Prometheus keeping only the 7 fields we read, per GPU (estimate)', n(memory.ours.rssDeltaPerGpu), n(memory.prometheus.rssDeltaPerGpuReadFieldsOnly), ratioText(memory.prometheus.rssDeltaPerGpuReadFieldsOnly, memory.ours.rssDeltaPerGpu)],
  );
  return { header: ['comparison', 'figure', 'ours', 'Prometheus', 'Prometheus ÷ ours'], rows };
}

function ratioText(theirs: number | null, ours: number): string {
  return theirs === null || ours <= 0 ? '' : `${Math.round((theirs / ours) * 10) / 10}×`;
}

function notesOf(settings: Settings, version: string, window: WindowResult, memory: MemoryResult, problems: string[]): string[] {
  const minutes = (window.seconds / 60).toFixed(1);
  const expected = Math.floor(window.seconds / settings.intervalSeconds);
  return [
    `same data: Prometheus ${version} and our service scraped the same ${settings.nodes} simulated exporters every ${settings.intervalSeconds} s for ${minutes} min, then the exporters stopped; ` +
      'every answer and timing reads what both hold then (the comparison window, not 24 h). The simulated field values are constant per GPU, so avg, min and max over time coincide per GPU; they differ across GPUs',
    'ours: the service in this process (startService, real sampler, HTTP scrapes). Latency: one request at a time, taking turns between the two sides (each on its own keep-alive connection) so both meet the same load; ' +
      'the client runs in this process for both; Prometheus may use both cores for a query, our service answers on one event loop',
    'PromQL: metrics = the 20 aggregates (5 metrics × avg/min/max/last_over_time over [1h]) of the job\'s GPU series (namespace and pod=~"<job>-[0-9]+") in one query joined with `or`; ' +
      'ranking = topk over avg_over_time joined with kube_pod_owner (kube-state-metrics stand-in) to group pods by Job; "ranking by pod" is the cheaper query that does not answer the same question. ' +
      'Prometheus evaluates the operands of one query one after the other; a dashboard sending the 20 aggregates as concurrent queries could spread them over both cores (at best about half the wall time)',
    `memory: Prometheus holds ${memory.prometheus.seriesPerGpu} DCGM series per GPU (every field dcgm-exporter reports; our service keeps 5 metrics from 7 of them) with ${minutes} min of samples; ` +
      `its RSS Δ is mostly per-series cost (index, labels, open head chunk) plus Go heap headroom; a 24 h hold adds little RSS, its older chunks are mmapped and compacted to disk every 2 h. ` +
      `The "7 fields" row scales its RSS Δ per series by the series of the fields we read, as a metric_relabel_configs keep would. Ours: rings for 24 h allocated up front (${formatBytes(memory.ours.ringBytes)}, more per GPU at ${settings.intervalSeconds} s than at 15 s: the raw ring holds an hour at the interval); ` +
      'our RSS Δ also holds the pod directory and workload links',
    ...(window.ours.scrapesPerExporter.max < expected - 1 || window.prometheus.samplesPerSeries.max < expected - 1
      ? [`!!! a side scraped fewer times than the ${expected} intervals of the window (ours up to ${window.ours.scrapesPerExporter.max}, Prometheus up to ${window.prometheus.samplesPerSeries.max}): it fell behind on a busy machine`]
      : []),
    ...(window.ours.failures > 0 ? [`!!! our sampler counted ${window.ours.failures} failed scrapes before the freeze (${JSON.stringify(window.ours.failureReasons)}): the machine was busy`] : []),
    ...(window.prometheus.targetsUp < settings.nodes ? [`!!! Prometheus had ${window.prometheus.targetsUp} of ${settings.nodes} exporters up at its last scrape before the freeze: the machine was busy`] : []),
    ...problems.map((problem) => `!!! ${problem}`),
  ];
}

function skipped(resultsName: string, environment: ReturnType<typeof describeEnvironment>, settings: Settings, reason: string, log: (line: string) => void): BenchOutcome {
  const note = `skipped: prometheus unavailable (${reason})`;
  log(`${NAME}: ${note}`);
  const resultsFile = writeResults(resultsName, { bench: NAME, ...environment, parameters: settings, skipped: reason, notes: [note] });
  return { name: NAME, resultsFile, requestErrors: 0, table: { header: ['comparison', 'figure', 'value'], rows: [['prometheus', 'skipped', 'prometheus unavailable']] }, notes: [note] };
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/prometheus.ts [--quick]`
  runPrometheusBench({ quick: process.argv.includes('--quick') }).then(
    (outcome) => {
      for (const row of outcome.table.rows) console.log(`  ${row.join(' | ')}`);
      for (const note of outcome.notes) console.log(`  ${note}`);
      process.exit(outcome.requestErrors > 0 ? 1 : 0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
