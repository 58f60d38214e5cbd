// The comparison window: our service and Prometheus scrape the same simulated exporters at the same
// interval for the same time, then the exporters stop (the "freeze"), so both hold the same samples
// and every later request reads exactly that data.
//
// Our service runs in this process (startService, as the telemetry benchmark's tick part): the real
// sampler scrapes the exporters over HTTP; it learns the exporter and GPU pods from one attach() +
// SYNC event instead of a Kubernetes API, and its workload rows are written to its index directly.
// Prometheus is a child process; kube_pod_owner comes from a stand-in served by this process.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import { READ_FIELDS } from '../../../src/telemetry/scrape/dcgm-readings.js';
import type { ExporterTarget } from '../../../src/telemetry/scrape/exporter-target.js';
import type { PrometheusServer } from './server.js';
import type { BenchService } from '../telemetry/service.js';
import { round } from '../report/format.js';

export interface WindowResult {
  /** Seconds from the first scrape of either side to the freeze. */
  seconds: number;
  /** Prometheus had every exporter as an active target this long after they were written to its file_sd file. */
  discoverySeconds: number;
  /** failures: scrapes that failed before the freeze, by reason (a busy machine can time some out). */
  ours: { scrapesPerExporter: { min: number; max: number }; failures: number; failureReasons: Record<string, number>; cpuSeconds: number };
  /** gpus: GPUs with a DCGM_FI_DEV_GPU_UTIL series; targetsUp: exporters up at the last scrape before the freeze. */
  prometheus: { samplesPerSeries: { min: number; max: number }; gpus: number; targetsUp: number; cpuSeconds: number | null };
  fleetCpuSeconds: number | null;
  /** Series Prometheus holds: every DCGM field (samples per exporter scrape), the seven our service reads, and its whole head. */
  series: { dcgm: number; dcgmRead: number; head: number };
}

export interface WindowOptions {
  bench: BenchService;
  prometheus: PrometheusServer;
  exporters: readonly string[];
  /** Starts our side: declares the pods to the service's telemetry. */
  attach: () => void;
  stopExporters: () => Promise<void>;
  fleetCpuSeconds: () => number | null;
  intervalSeconds: number;
  windowSeconds: number;
  log: (line: string) => void;
}

/** dcgm-exporter fields our service reads. */
const READ_FIELD_COUNT = READ_FIELDS.length;

export async function runWindow(options: WindowOptions): Promise<WindowResult> {
  const { bench, prometheus, log } = options;
  const scrapes = countScrapes(bench);

  // Prometheus first: it applies service-discovery updates every 5 s, our service at once. Each then
  // scrapes every exporter once per interval from its next tick (ours) or target offset (Prometheus).
  const discoveryStart = performance.now();
  prometheus.setDcgmTargets(options.exporters);
  await waitForTargets(prometheus, options.exporters.length, 30_000);
  const discoverySeconds = (performance.now() - discoveryStart) / 1000;
  const began = performance.now();
  const ourCpu = process.cpuUsage();
  const prometheusCpu = prometheus.cpuSeconds();
  const fleetCpu = options.fleetCpuSeconds();
  options.attach();
  const failuresBefore = await failuresByReason(bench.service.metrics.registry);
  for (let waited = 0; waited < options.windowSeconds; ) {
    const step = Math.min(30, options.windowSeconds - waited);
    await sleep(step * 1000);
    waited += step;
    log(`  window: ${waited} of ${options.windowSeconds} s`);
  }

  // CPU read before the fleet stops: its process is gone afterwards.
  const cpu = process.cpuUsage(ourCpu);
  const prometheusCpuAfter = prometheus.cpuSeconds();
  const fleetCpuAfter = options.fleetCpuSeconds();
  // Failures read while the exporters still answer: stopping them fails the scrapes in flight.
  const failureReasons: Record<string, number> = {};
  for (const [reason, count] of await failuresByReason(bench.service.metrics.registry)) {
    const added = count - (failuresBefore.get(reason) ?? 0);
    if (added > 0) failureReasons[reason] = added;
  }
  const failures = Object.values(failureReasons).reduce((sum, n) => sum + n, 0);
  const frozenAt = Date.now();
  await options.stopExporters();
  const seconds = (performance.now() - began) / 1000;
  // Scrapes in flight at the freeze settle within a scrape timeout (the interval).
  await sleep(options.intervalSeconds * 1000 + 1_500);
  scrapes.stop();
  // Read after the freeze, so that they do not lengthen the window: Prometheus' state just before it
  // (an instant query at that time) from the per-target series, 1,250 rather than 150,000.
  const before = async (expression: string) => (await prometheus.query(expression, frozenAt - 1))[0]?.value ?? 0;
  const targetsUp = await before('sum(up{job="dcgm-exporter"})');
  const dcgmSeries = await before('sum(scrape_samples_post_metric_relabeling{job="dcgm-exporter"})');
  const at = Date.now();
  const perSeries = await prometheus.query('count_over_time(DCGM_FI_DEV_GPU_UTIL[1h])', at);
  const counts = perSeries.map((s) => s.value);
  const series = {
    dcgm: dcgmSeries,
    // Every GPU reports each of the fields read (none is MIG-partitioned).
    dcgmRead: READ_FIELD_COUNT * perSeries.length,
    head: (await prometheus.selfMetrics(['prometheus_tsdb_head_series']))['prometheus_tsdb_head_series'] ?? 0,
  };
  const ours = [...scrapes.counts.values()];
  return {
    seconds: round(seconds),
    discoverySeconds: round(discoverySeconds),
    ours: {
      scrapesPerExporter: { min: ours.length < options.exporters.length ? 0 : Math.min(...ours), max: Math.max(0, ...ours) },
      failures,
      failureReasons,
      cpuSeconds: round((cpu.user + cpu.system) / 1e6),
    },
    prometheus: {
      samplesPerSeries: { min: counts.length === 0 ? 0 : Math.min(...counts), max: Math.max(0, ...counts) },
      gpus: perSeries.length,
      targetsUp,
      cpuSeconds: prometheusCpu === null || prometheusCpuAfter === null ? null : round(prometheusCpuAfter - prometheusCpu),
    },
    fleetCpuSeconds: fleetCpu === null || fleetCpuAfter === null ? null : round(fleetCpuAfter - fleetCpu),
    series,
  };
}

/** Counts the payloads our telemetry stores per exporter, by wrapping ingest() on the instance the sampler calls. */
function countScrapes(bench: BenchService): { counts: Map<string, number>; stop(): void } {
  const { telemetry } = bench;
  const counts = new Map<string, number>();
  const ingest = telemetry.ingest.bind(telemetry);
  telemetry.ingest = (target: ExporterTarget, text: string, at: number) => {
    const result = ingest(target, text, at);
    counts.set(target.key, (counts.get(target.key) ?? 0) + 1);
    return result;
  };
  return {
    counts,
    stop: () => {
      telemetry.ingest = ingest;
    },
  };
}

async function waitForTargets(prometheus: PrometheusServer, expected: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let active = 0;
  while (performance.now() < deadline) {
    const response = await fetch(`${prometheus.url}/api/v1/targets?state=active`);
    const body = (await response.json()) as { data?: { activeTargets?: { labels?: Record<string, string> }[] } };
    active = (body.data?.activeTargets ?? []).filter((t) => t.labels?.['job'] === 'dcgm-exporter').length;
    if (active >= expected) return;
    await sleep(250);
  }
  throw new Error(`Prometheus lists ${active} of ${expected} exporters as targets after ${timeoutMs / 1000} s`);
}

async function failuresByReason(registry: Registry): Promise<Map<string, number>> {
  const name = 'gpucap_scrape_failures_total';
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`The service registers no metric "${name}"`);
  const byReason = new Map<string, number>();
  for (const { labels, value } of (await metric.get()).values) {
    const reason = String(labels['reason'] ?? 'unknown');
    byReason.set(reason, (byReason.get(reason) ?? 0) + value);
  }
  return byReason;
}
