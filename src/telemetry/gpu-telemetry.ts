// The telemetry state of the service: per cluster, what its pod informer says about exporters and GPU
// pods, and its ResourceClaim informer about the pods of DRA claims; across clusters, every GPU's
// rings and every workload's lifetime totals. The sampler feeds it payloads; the read side asks it
// for summaries and rankings (the TelemetryReader port). Only exporters in the trusted namespaces are
// targets, and a GPU's samples count only for a pod on its exporter's node (docs/telemetry.md, "Trust").
import type { WatchedResource } from '../domain/cluster-status.js';
import { METRIC_NAMES, type MetricName, type MetricSummary, type RankedMetricName } from '../domain/metrics.js';
import type { Percentile } from '../domain/percentiles.js';
import type { LifetimeTotals } from '../domain/telemetry.js';
import type { TelemetryReader } from '../query/ports.js';
import type { ResourceClaim } from '../k8s/objects/dra-types.js';
import type { Pod } from '../k8s/objects/k8s-types.js';
import type { ResourceEvent } from '../k8s/objects/resource-event.js';
import { readDcgmPayload } from './scrape/dcgm-readings.js';
import type { ExporterDiscovery, ExporterTarget } from './scrape/exporter-target.js';
import { parseSelectors } from './scrape/exporter-target.js';
import { GpuFleet, resolutionFor } from './rings/gpu-fleet.js';
import type { BucketAccumulator } from './sinks/bucket-accumulator.js';
import type { LifetimeAccumulators } from './sinks/lifetime.js';
import { summarizeTotals } from './sinks/lifetime.js';
import { decodeMetric, encodeMetric, METRIC_COUNT, METRIC_SLOT, MISSING } from './rings/metric-codec.js';
import { takeHistograms } from './summaries/percentile-histogram.js';
import type { IgnoredExporter } from './scrape/exporter-pods.js';
import { PodDirectory } from './scrape/pod-directory.js';
import type { DroppedSample, IngestResult } from './scrape/sampler.js';
import { addPercentiles } from './summaries/window-percentiles.js';
import { WindowSummary } from './summaries/window-summary.js';
import { XidWatch } from './scrape/xid-watch.js';

const HOUR_SECONDS = 3600;
/** A GPU silent this long is forgotten, as the fleet forgets it (its next XID value is a baseline). */
const XID_MEMORY_MS = 24 * 3_600_000;
/** GPUs expected per exporter before any payload was read: the 8 of a DGX/HGX node. */
const GPUS_PER_EXPORTER_GUESS = 8;

export interface AttachedTelemetry {
  onEvent(resource: WatchedResource, event: ResourceEvent<unknown>, namespace: string | undefined): void;
  detach(): void;
}

export interface GpuTelemetryOptions {
  discovery: ExporterDiscovery;
  gpuResources: readonly string[];
  rawSlots: number;
  /** Where samples go: this process's rings and lifetime totals, or (`buckets`) summaries shared through the index. */
  samples: { lifetime: LifetimeAccumulators } | { buckets: BucketAccumulator };
  /** Whether this replica scrapes a cluster's exporters now (shared telemetry: only its writer does). Unset: every cluster. */
  scrapes?: (clusterId: string) => boolean;
  /** Told once of each exporter pod outside the trusted namespaces, which is never scraped. */
  onExporterIgnored?: (exporter: IgnoredExporter) => void;
}

const NO_DROPS: readonly DroppedSample[] = Object.freeze([]);

const toSeconds = (ms: number): number => Math.floor(ms / 1000);

export class GpuTelemetry implements TelemetryReader {
  readonly #options: GpuTelemetryOptions;
  readonly #selectors: [string, string][];
  readonly #directories = new Map<string, PodDirectory>();
  readonly #fleet: GpuFleet;
  /** Each GPU's last XID value, on both paths (the fleet keeps no GPUs on the shared one). */
  readonly #xids = new XidWatch();
  readonly #stored = new Uint16Array(METRIC_COUNT);
  readonly #decoded = new Float64Array(METRIC_COUNT);
  /** Payloads read and the GPUs in them, for the GPUs per exporter a tick's reservation expects. */
  #payloads = 0;
  #payloadGpus = 0;

  constructor(options: GpuTelemetryOptions) {
    this.#options = options;
    this.#selectors = parseSelectors(options.discovery.selectors);
    this.#fleet = new GpuFleet({ rawSlots: options.rawSlots });
  }

  attach(cluster: { clusterId: string }): AttachedTelemetry {
    const directory = new PodDirectory(cluster.clusterId, {
      discovery: this.#options.discovery,
      selectors: this.#selectors,
      gpuResources: this.#options.gpuResources,
      ...(this.#options.onExporterIgnored === undefined ? {} : { onExporterIgnored: this.#options.onExporterIgnored }),
    });
    this.#directories.set(cluster.clusterId, directory);
    return {
      onEvent: (resource, event, namespace) => {
        if (resource === 'pods') directory.onPodEvent(event as ResourceEvent<Pod>, namespace);
        else if (resource === 'resourceclaims') directory.onClaimEvent(event as ResourceEvent<ResourceClaim>, namespace);
      },
      detach: () => {
        if (this.#directories.get(cluster.clusterId) === directory) this.#directories.delete(cluster.clusterId);
      },
    };
  }

  /** Every trusted exporter pod of every watched cluster. */
  *targets(): Generator<ExporterTarget> {
    const scrapes = this.#options.scrapes;
    for (const [clusterId, directory] of this.#directories) if (scrapes === undefined || scrapes(clusterId)) yield* directory.exporters();
  }

  /** Exporter pods of every watched cluster that are not scraped: outside the trusted namespaces. */
  *ignoredExporters(): Generator<IgnoredExporter> {
    for (const directory of this.#directories.values()) yield* directory.ignoredExporters();
  }

  /**
   * Called as a tick starts: makes room for the rings of every GPU the tick's exporters are expected to
   * report, in one allocation rather than one per new GPU as payloads arrive.
   */
  beforeTick(targets: readonly ExporterTarget[]): void {
    if (!('lifetime' in this.#options.samples)) return;
    const perExporter = this.#payloads === 0 ? GPUS_PER_EXPORTER_GUESS : this.#payloadGpus / this.#payloads;
    this.#fleet.reserve(Math.ceil(targets.length * perExporter));
  }

  /**
   * Stores one exporter's payload, sampled at `at` (ms). Throws ExpositionParseError for unreadable
   * text. A GPU whose pod runs on another node than the exporter is not stored at all: it is no GPU
   * of this exporter's node to record, and its samples count for nobody (returned as dropped).
   */
  ingest(target: ExporterTarget, text: string, at: number): IngestResult {
    const payload = readDcgmPayload(text);
    const directory = this.#directories.get(target.clusterId);
    const time = toSeconds(at);
    const stored = this.#stored;
    const decoded = this.#decoded;
    const samples = this.#options.samples;
    if (payload.readings.length > 0) {
      this.#payloads += 1;
      this.#payloadGpus += payload.readings.length;
    }
    let dropped: DroppedSample[] | undefined;
    for (const reading of payload.readings) {
      const attribution = directory?.attributionOf(reading, target.node);
      if (typeof attribution === 'object') {
        (dropped ??= []).push({ ...attribution, gpu: reading.key });
        continue;
      }
      const workloadId = attribution;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        const value = encodeMetric(m, reading.values[m] ?? NaN);
        stored[m] = value;
        // Lifetime totals take the values as the rings hold them, so both report the same numbers.
        decoded[m] = value === MISSING ? NaN : decodeMetric(m, value);
      }
      const mig = reading.migInstance !== undefined;
      if ('buckets' in samples) {
        const xidError = this.#xids.observe(reading.key, reading.xid, at);
        if (workloadId !== undefined) {
          samples.buckets.add({ workloadId, clusterId: target.clusterId, gpuKey: reading.key, at, values: decoded, mig, xidError });
        }
        continue;
      }
      const identity = {
        key: reading.key,
        clusterId: target.clusterId,
        hostname: reading.hostname ?? target.node,
        modelName: reading.modelName,
      };
      const key = this.#fleet.record(identity, { time, stored, workloadId });
      if (key === null) continue;
      const xidError = this.#xids.observe(key, reading.xid, at);
      if (workloadId !== undefined) samples.lifetime.add(workloadId, key, decoded, { at, mig, xidError });
    }
    return { samples: payload.samples, gpus: payload.readings.length, dropped: dropped ?? NO_DROPS };
  }

  /** Lets go of GPUs and workloads older than the rings' span. */
  prune(at: number): void {
    this.#fleet.prune(toSeconds(at));
    this.#xids.forgetBefore(at - XID_MEMORY_MS);
  }

  stats(): {
    gpus: number;
    attributedGpus: number;
    workloads: number;
    ringBytes: number;
    ringReservedBytes: number;
    exporters: number;
    gpuPods: number;
  } {
    let exporters = 0;
    let gpuPods = 0;
    for (const directory of this.#directories.values()) {
      exporters += directory.exporterCount;
      gpuPods += directory.gpuPods;
    }
    return { ...this.#fleet.stats(), exporters, gpuPods };
  }

  async summarize(request: Parameters<TelemetryReader['summarize']>[0]): Promise<Record<MetricName, MetricSummary>> {
    const { workload, window, lifetime, metrics, percentiles = [] } = request;
    const samples = this.#options.samples;
    const workloadId = workload.workloadId;
    if (lifetime) {
      const totals = 'lifetime' in samples ? samples.lifetime.totals(workloadId) : undefined;
      const summaries = summarizeTotals(totals, metrics);
      return percentiles.length === 0
        ? summaries
        : this.#lifetimePercentiles(workloadId, toSeconds(window.from), totals, summaries, { metrics, percentiles });
    }
    const summary = new WindowSummary();
    const seconds = { from: toSeconds(window.from), to: toSeconds(window.to) };
    this.#fleet.collect(workloadId, seconds, summary);
    const summaries = summary.summaries(metrics);
    if (percentiles.length === 0) return summaries;
    const histograms = takeHistograms();
    this.#fleet.countValues(workloadId, seconds, histograms);
    return addPercentiles(summaries, { metrics, percentiles }, histograms);
  }

  /**
   * job_lifetime's percentiles come from the rings, which hold 24 hours: every value of the workload
   * they still hold, at the finest resolution that reaches back to its start. A percentile is given
   * only where that is every sample its lifetime totals counted (same count: the rings keep a subset
   * of those samples, so equal counts mean the same samples); after a restart, or once its oldest
   * samples left the rings, it is null.
   */
  #lifetimePercentiles(
    workloadId: string,
    startedAt: number,
    totals: LifetimeTotals | undefined,
    summaries: Record<MetricName, MetricSummary>,
    request: { metrics: readonly MetricName[]; percentiles: readonly Percentile[] },
  ): Record<MetricName, MetricSummary> {
    const histograms = takeHistograms();
    const resolution = resolutionFor(this.#fleet.newestTime - startedAt);
    this.#fleet.countValues(workloadId, { from: -Infinity, to: Infinity }, histograms, resolution);
    return addPercentiles(summaries, request, histograms, (slot, counted) => totals?.[METRIC_NAMES[slot] as MetricName]?.count === counted);
  }

  async lastHour(metric: RankedMetricName, now: number): Promise<Map<string, { avg: number; current: number }>> {
    const to = toSeconds(now);
    return this.#fleet.rank(METRIC_SLOT[metric], { from: to - HOUR_SECONDS, to });
  }
}
