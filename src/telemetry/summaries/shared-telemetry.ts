// The TelemetryReader of replicas that share telemetry through PostgreSQL: every answer comes from the
// buckets and lifetime totals the clusters' writers stored, so every replica gives the same one. A
// window is answered in whole buckets: those that start inside it, up to the newest stored (the
// current bucket is stored once it ends). Figures are rounded as the rings' are.
import { METRIC_NAMES, type MetricName, type MetricSummary, type RankedMetricName } from '../../domain/metrics.js';
import type { GpuBucketFigures, GpuSummaryStore } from '../../domain/telemetry.js';
import type { TelemetryReader } from '../../query/ports.js';
import { summarizeTotals } from '../sinks/lifetime.js';
import { encodeMetric, METRIC_COUNT, METRIC_SLOT } from '../rings/metric-codec.js';
import { takeHistograms, type PercentileHistograms } from './percentile-histogram.js';
import { roundAverage } from './round-average.js';
import { addPercentiles } from './window-percentiles.js';

const EMPTY: MetricSummary = { avg: null, min: null, max: null, current: null };

/**
 * Counts each stored bucket into `histograms`, per metric slot, as its mean in stored units,
 * weighted by its sample count: a stored bucket sums every GPU of the workload over its width, so its
 * samples are off from that mean by at most its max − min. The rounded mean is kept inside the
 * bucket's [min, max], which floating point could leave by a hair.
 */
function countBucketMeans(buckets: readonly GpuBucketFigures[], histograms: PercentileHistograms): void {
  for (const bucket of buckets) {
    for (let slot = 0; slot < METRIC_COUNT; slot += 1) {
      const count = bucket.count[slot] ?? 0;
      if (count <= 0) continue;
      const low = encodeMetric(slot, bucket.min[slot] ?? -Infinity);
      const high = encodeMetric(slot, bucket.max[slot] ?? Infinity);
      histograms.add(slot, Math.min(high, Math.max(low, encodeMetric(slot, (bucket.sum[slot] ?? 0) / count))), count);
    }
  }
}

export class SharedTelemetryReader implements TelemetryReader {
  readonly #store: GpuSummaryStore;
  readonly #widthMs: number;

  constructor(store: GpuSummaryStore, options: { widthMs: number }) {
    this.#store = store;
    this.#widthMs = options.widthMs;
  }

  async summarize(request: Parameters<TelemetryReader['summarize']>[0]): Promise<Record<MetricName, MetricSummary>> {
    const { workload, window, lifetime, metrics, percentiles = [] } = request;
    const workloadId = workload.workloadId;
    if (lifetime) {
      const summaries = summarizeTotals(await this.#store.lifetime(workloadId), metrics);
      if (percentiles.length === 0) return summaries;
      // Buckets are kept 25 hours: the lifetime's percentiles only while they still hold all of it.
      const { buckets, counts } = await this.#store.lifetimeBuckets(workloadId);
      const histograms = takeHistograms();
      countBucketMeans(buckets, histograms);
      return addPercentiles(
        summaries,
        { metrics, percentiles },
        histograms,
        (slot, counted) => counts[METRIC_NAMES[slot] as MetricName] === counted,
      );
    }
    const from = Math.ceil(window.from / this.#widthMs) * this.#widthMs;
    const totals = await this.#store.window(workloadId, { from, to: window.to });
    const result = {} as Record<MetricName, MetricSummary>;
    for (const name of metrics) {
      const slot = METRIC_NAMES.indexOf(name);
      const count = totals?.count[slot] ?? 0;
      if (totals === null || count === 0) {
        result[name] = EMPTY;
        continue;
      }
      const latestCount = totals.latestCount[slot] ?? 0;
      result[name] = {
        avg: roundAverage((totals.sum[slot] ?? 0) / count),
        min: totals.min[slot] ?? null,
        max: totals.max[slot] ?? null,
        current: latestCount === 0 ? null : roundAverage((totals.latestSum[slot] ?? 0) / latestCount),
      };
    }
    if (percentiles.length === 0) return result;
    const buckets = await this.#store.buckets(workloadId, { from, to: window.to });
    const histograms = takeHistograms();
    countBucketMeans(buckets, histograms);
    return addPercentiles(result, { metrics, percentiles }, histograms);
  }

  async lastHour(metric: RankedMetricName, now: number): Promise<Map<string, { avg: number; current: number }>> {
    const figures = await this.#store.lastHour(METRIC_SLOT[metric], now);
    const result = new Map<string, { avg: number; current: number }>();
    for (const [workloadId, f] of figures) {
      const avg = roundAverage(f.sum / f.count);
      // A workload whose newest bucket lacks this metric is ranked by its hour alone.
      result.set(workloadId, { avg, current: f.latestCount === 0 ? avg : roundAverage(f.latestSum / f.latestCount) });
    }
    return result;
  }
}
