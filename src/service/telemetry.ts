// GPU telemetry: exporter discovery (through the pod informers), the sampler, and where its samples
// go: this process's rings and lifetime totals (SQLite), or summaries every replica shares through
// PostgreSQL, gathered by the writer of each cluster (docs/scaling.md).
import { registerIgnoredExporterMetrics, registerTelemetryMetrics } from '../admin/telemetry-metrics.js';
import { registerTelemetrySummaryMetrics } from '../admin/telemetry-summary-metrics.js';
import { scrapeTimeoutSeconds } from '../config/schema.js';
import type { GpuSummaryStore } from '../domain/telemetry.js';
import type { ClusterWriters } from '../ha/cluster-writers.js';
import type { TelemetryReader } from '../query/ports.js';
import { runPeriodically } from '../runtime/periodic.js';
import type { TelemetryStorage } from '../store/index-backend.js';
import { BucketAccumulator } from '../telemetry/sinks/bucket-accumulator.js';
import { rawSlotsFor } from '../telemetry/rings/gpu-rings.js';
import { GpuTelemetry, type GpuTelemetryOptions } from '../telemetry/gpu-telemetry.js';
import { createHttpScrape } from '../telemetry/scrape/http-scrape.js';
import { LifetimeAccumulators } from '../telemetry/sinks/lifetime.js';
import type { IdleMinuteListener } from '../telemetry/sinks/usage-tally.js';
import { Sampler, type ExporterStatus } from '../telemetry/scrape/sampler.js';
import { SharedTelemetryReader } from '../telemetry/summaries/shared-telemetry.js';
import { SummaryFlusher } from '../telemetry/sinks/summary-flusher.js';
import type { ServiceContext } from './service-context.js';

// A finished workload's lifetime totals leave memory this long after its last sample (read back from SQLite).
const LIFETIME_IDLE_MS = 15 * 60_000;

/** Where samples go: this process's lifetime totals, or the summaries every replica shares. */
export type TelemetryStore = { kind: 'local'; lifetimes: LifetimeAccumulators } | { kind: 'shared'; summaries: GpuSummaryStore };

export interface TelemetryRuntime {
  reader: TelemetryReader;
  telemetry: GpuTelemetry;
  sampler: Sampler;
}

/** The index's telemetry storage, made ready for samples; local lifetime totals are written last with the flushes. */
export function telemetryStore(context: ServiceContext, storage: TelemetryStorage, onIdleMinute: IdleMinuteListener): TelemetryStore {
  const { config, clock, parts } = context;
  switch (storage.kind) {
    case 'local': {
      const lifetimes = new LifetimeAccumulators(storage.lifetimes, {
        clock,
        idleMs: LIFETIME_IDLE_MS,
        intervalSeconds: config.scrape_interval_seconds,
        idleThresholdPercent: config.idle_threshold_percent,
        onIdleMinute,
      });
      // In the flush phase: runs after the sampler and the lifetime flush loop have stopped.
      parts.phase('flush').add('lifetime totals', () => lifetimes.flush());
      return { kind: 'local', lifetimes };
    }
    case 'shared':
      return { kind: 'shared', summaries: storage.summaries };
  }
}

/**
 * The sampler and where its samples go. The last write of either store is in the flush phase, so that
 * it runs after the sampler and the flush loops have stopped.
 */
export function startTelemetry(
  context: ServiceContext,
  deps: { store: TelemetryStore; writers: ClusterWriters; onIdleMinute: IdleMinuteListener },
): TelemetryRuntime {
  const { config, metrics, clock, delay, logger, parts } = context;
  const { store } = deps;
  const { route, reader } =
    store.kind === 'local'
      ? { route: { samples: { lifetime: store.lifetimes } }, reader: undefined }
      : shareTelemetry(context, { summaries: store.summaries, writers: deps.writers, onIdleMinute: deps.onIdleMinute });
  const log = logger.child({ component: 'sampler' });
  const telemetry = new GpuTelemetry({
    discovery: {
      selectors: config.exporter_selectors,
      // Only cluster admins create pods in the GPU Operator's namespaces (and the service's own); a
      // team can in its own namespaces, so an exporter there could forge anyone's figures.
      namespaces: [...new Set([...config.exporter_namespaces, config.namespace])],
      port: config.exporter_port,
      path: config.exporter_path,
    },
    gpuResources: config.gpu_resources,
    rawSlots: rawSlotsFor(config.scrape_interval_seconds),
    onExporterIgnored: (exporter) =>
      log.warn(
        {
          cluster: exporter.clusterId,
          namespace: exporter.namespace,
          pod: exporter.pod,
          node: exporter.node,
          podIP: exporter.podIP,
          reason: exporter.reason,
        },
        'dcgm-exporter pod outside exporter_namespaces: never scraped (docs/telemetry.md, "Trust")',
      ),
    ...route,
  });
  registerIgnoredExporterMetrics(metrics.registry, () => telemetry.ignoredExporters());
  if (store.kind === 'local') {
    const flusher = runPeriodically(config.lifetime_flush_seconds * 1000, () => void store.lifetimes.flush(), {
      delay,
      onError: (error) => logger.error({ err: error }, 'Lifetime totals flush failed'),
    });
    parts.phase('stop sources').add('lifetime flush loop', () => flusher.stop());
  }
  const sampler: Sampler = new Sampler({
    intervalMs: config.scrape_interval_seconds * 1000,
    concurrency: config.scrape_concurrency,
    clock,
    delay,
    scrape: createHttpScrape({ timeoutMs: scrapeTimeoutSeconds(config) * 1000, maxBytes: config.scrape_max_bytes }),
    targets: () => telemetry.targets(),
    ingest: (target, text, at) => telemetry.ingest(target, text, at),
    observer: registerTelemetryMetrics(metrics.registry, {
      stats: () => telemetry.stats(),
      exporters: (): ExporterStatus[] => sampler.statuses(),
      lastTick: () => sampler.lastTick(),
    }),
    logger: log,
    beforeTick: (targets) => telemetry.beforeTick(targets),
    afterTick: (at) => telemetry.prune(at),
  });
  parts.phase('stop sources').add('sampler', () => sampler.stop());
  sampler.start();
  return { reader: reader ?? telemetry, telemetry, sampler };
}

/** The writer's buckets, their flush loop and last write, and the reader every replica answers from. */
function shareTelemetry(
  context: ServiceContext,
  deps: { summaries: GpuSummaryStore; writers: ClusterWriters; onIdleMinute: IdleMinuteListener },
): { route: Pick<GpuTelemetryOptions, 'samples' | 'scrapes'>; reader: TelemetryReader } {
  const { config, clock, delay, logger, parts } = context;
  const { summaries, writers } = deps;
  // The clusters this replica writes: only their exporters are scraped, only their summaries written.
  const writing = (): string[] => writers.statuses().filter((s) => s.role === 'writer').map((s) => s.clusterId);
  const widthMs = config.telemetry_summary_seconds * 1000;
  const buckets = new BucketAccumulator({
    widthMs,
    intervalSeconds: config.scrape_interval_seconds,
    idleThresholdPercent: config.idle_threshold_percent,
    onIdleMinute: deps.onIdleMinute,
  });
  const flusher = new SummaryFlusher(summaries, buckets, {
    // A tick's samples carry its start time and arrive up to the scrape timeout later.
    graceMs: scrapeTimeoutSeconds(config) * 1000 + 1000,
    clock,
    clusters: writing,
    logger: logger.child({ component: 'telemetry-summaries' }),
  });
  parts.phase('flush').add('telemetry summaries', async () => void (await flusher.flush({ all: true })));
  registerTelemetrySummaryMetrics(context.metrics.registry, { stats: () => flusher.stats() });
  const loop = runPeriodically(Math.min(widthMs, 5000), async () => void (await flusher.flush()), {
    delay,
    onError: (error) =>
      logger.warn({ err: error, ...flusher.stats() }, 'GPU telemetry summaries could not be written; kept for the next try'),
  });
  parts.phase('stop sources').add('telemetry summaries loop', () => loop.stop());
  return {
    route: { samples: { buckets }, scrapes: (clusterId) => writing().includes(clusterId) },
    reader: new SharedTelemetryReader(summaries, { widthMs }),
  };
}
