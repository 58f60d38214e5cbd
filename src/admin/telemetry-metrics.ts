// Prometheus series of the sampler and the rings: scrape outcomes as they happen (a histogram cannot
// be read back from a status object), and the telemetry state's size read at scrape time; and what
// the trust rules keep out: samples that count for nobody, exporters never scraped.
import { Counter, Histogram, type Registry } from 'prom-client';
import { gaugeFrom } from './collected-metrics.js';

export interface TelemetryMetricSources {
  stats: () => {
    gpus: number;
    attributedGpus: number;
    workloads: number;
    ringBytes: number;
    ringReservedBytes: number;
    exporters: number;
    gpuPods: number;
  };
  exporters: () => readonly { clusterId: string; consecutiveFailures: number; lastGpus: number }[];
  lastTick: () => { durationMs: number } | null;
}

/** What the sampler reports after each scrape (SamplerObserver). */
export interface ScrapeObserver {
  scraped(target: { clusterId: string }, result: { seconds: number; samples: number; dropped: readonly { reason: string }[] }): void;
  failed(target: { clusterId: string }, failure: { reason: string; seconds: number }): void;
}

export function registerTelemetryMetrics(registry: Registry, sources: TelemetryMetricSources): ScrapeObserver {
  const observer = scrapeObserver(registry);
  registerExporterGauges(registry, sources);
  registerStateGauges(registry, sources.stats);
  return observer;
}

function scrapeObserver(registry: Registry): ScrapeObserver {
  const duration = new Histogram({
    name: 'gpucap_scrape_duration_seconds',
    help: 'Time of one exporter scrape (request, download, parse, store), by cluster and outcome',
    labelNames: ['cluster', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const failures = new Counter({
    name: 'gpucap_scrape_failures_total',
    help: 'Failed exporter scrapes by cluster and reason (timeout, http_status, too_large, connection, encoding, parse)',
    labelNames: ['cluster', 'reason'],
    registers: [registry],
  });
  const samples = new Counter({
    name: 'gpucap_scrape_samples_total',
    help: 'Samples read from exporters, by cluster',
    labelNames: ['cluster'],
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'gpucap_telemetry_samples_dropped_total',
    help:
      'GPU samples (one per GPU per scrape) stored for nobody, by cluster and reason ' +
      '(other_node: the pod they name runs on another node than the exporter)',
    labelNames: ['cluster', 'reason'],
    registers: [registry],
  });
  return {
    scraped(target, result) {
      duration.observe({ cluster: target.clusterId, outcome: 'success' }, result.seconds);
      samples.inc({ cluster: target.clusterId }, result.samples);
      for (const drop of result.dropped) dropped.inc({ cluster: target.clusterId, reason: drop.reason });
    },
    failed(target, failure) {
      duration.observe({ cluster: target.clusterId, outcome: 'failure' }, failure.seconds);
      failures.inc({ cluster: target.clusterId, reason: failure.reason });
    },
  };
}

function registerExporterGauges(registry: Registry, sources: TelemetryMetricSources): void {
  const perCluster = (value: (e: { consecutiveFailures: number; lastGpus: number }) => number) => () => {
    const byCluster = new Map<string, number>();
    for (const e of sources.exporters()) byCluster.set(e.clusterId, (byCluster.get(e.clusterId) ?? 0) + value(e));
    return [...byCluster].map(([cluster, sum]) => ({ labels: { cluster }, value: sum }));
  };
  const failing = (e: { consecutiveFailures: number }) => e.consecutiveFailures > 0;
  gaugeFrom(registry, 'gpucap_exporters', 'dcgm-exporter pods being scraped, by cluster', ['cluster'], perCluster(() => 1));
  gaugeFrom(
    registry,
    'gpucap_exporters_failing',
    'Exporters whose last scrape failed, by cluster',
    ['cluster'],
    perCluster((e) => (failing(e) ? 1 : 0)),
  );
  // The share of GPUs without telemetry, which the chart's GpucapExportersFailing alert reads: each
  // exporter's GPUs as its last successful scrape reported them (0 for one that never answered).
  gaugeFrom(
    registry,
    'gpucap_exporter_gpus',
    'GPUs of the scraped exporters as each last reported them, by cluster',
    ['cluster'],
    perCluster((e) => e.lastGpus),
  );
  gaugeFrom(
    registry,
    'gpucap_exporter_gpus_failing',
    'GPUs of the exporters whose last scrape failed, as each last reported them, by cluster',
    ['cluster'],
    perCluster((e) => (failing(e) ? e.lastGpus : 0)),
  );
  gaugeFrom(
    registry,
    'gpucap_sampler_tick_seconds',
    'Time the last sampler tick took to scrape every exporter; alert when it nears the scrape interval',
    [],
    () => {
      const tick = sources.lastTick();
      return tick === null ? [] : [{ labels: {}, value: tick.durationMs / 1000 }];
    },
  );
}

type TelemetryStats = ReturnType<TelemetryMetricSources['stats']>;

/** The telemetry state's size, read at scrape time: name, help and the figure read. */
const STATE_GAUGES: readonly [string, string, (stats: TelemetryStats) => number][] = [
  ['gpucap_telemetry_gpus', 'GPUs (and MIG instances) with samples in the last 24 h', (s) => s.gpus],
  ['gpucap_telemetry_attributed_gpus', 'GPUs whose latest sample belongs to a workload', (s) => s.attributedGpus],
  ['gpucap_telemetry_workloads', 'Workloads with samples in the last 24 h', (s) => s.workloads],
  ['gpucap_telemetry_ring_bytes', 'Bytes held by the per-GPU ring buffers (outside the V8 heap)', (s) => s.ringBytes],
  [
    'gpucap_telemetry_ring_reserved_bytes',
    'Bytes of the slabs the rings are carved from, free slots included (reserved as a tick starts)',
    (s) => s.ringReservedBytes,
  ],
  ['gpucap_telemetry_gpu_pods', 'GPU pods known to the attribution directory (pods with DRA claims included)', (s) => s.gpuPods],
];

function registerStateGauges(registry: Registry, stats: () => TelemetryStats): void {
  for (const [name, help, read] of STATE_GAUGES) gaugeFrom(registry, name, help, [], () => [{ labels: {}, value: read(stats()) }]);
}

/**
 * Exporter pods that match the selectors but are never scraped, by cluster and reason
 * (untrusted_namespace: outside exporter_namespaces and the service's namespace). A gauge, not a
 * count of drops: such an exporter is never contacted, so it has no samples to count.
 */
export function registerIgnoredExporterMetrics(registry: Registry, ignored: () => Iterable<{ clusterId: string; reason: string }>): void {
  const help = 'Exporter pods never scraped, by cluster and reason (untrusted_namespace)';
  gaugeFrom(registry, 'gpucap_telemetry_exporters_ignored', help, ['cluster', 'reason'], () => {
    const counts = new Map<string, { labels: { cluster: string; reason: string }; value: number }>();
    for (const { clusterId, reason } of ignored()) {
      const key = `${clusterId}\n${reason}`;
      const entry = counts.get(key);
      if (entry === undefined) counts.set(key, { labels: { cluster: clusterId, reason }, value: 1 });
      else entry.value += 1;
    }
    return [...counts.values()];
  });
}
