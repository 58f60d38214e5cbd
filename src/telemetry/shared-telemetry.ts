// The TelemetryReader of replicas that share telemetry through PostgreSQL: every answer comes from the
// buckets and lifetime totals the clusters' writers stored, so every replica gives the same one. A
// window is answered in whole buckets: those that start inside it, up to the newest stored (the
// current bucket is stored once it ends). Figures are rounded as the rings' are.
import { METRIC_NAMES, type MetricName, type MetricSummary, type RankedMetricName } from '../domain/metrics.js';
import type { GpuSummaryStore } from '../domain/telemetry.js';
import type { TelemetryReader } from '../query/ports.js';
import { summarizeTotals } from './lifetime.js';
import { METRIC_SLOT } from './metric-codec.js';
import { roundAverage } from './round-average.js';

const EMPTY: MetricSummary = { avg: null, min: null, max: null, current: null };

export class SharedTelemetryReader implements TelemetryReader {
  readonly #store: GpuSummaryStore;
  readonly #widthMs: number;

  constructor(store: GpuSummaryStore, options: { widthMs: number }) {
    this.#store = store;
    this.#widthMs = options.widthMs;
  }

  async summarize(request: Parameters<TelemetryReader['summarize']>[0]): Promise<Record<MetricName, MetricSummary>> {
    const { workload, window, lifetime, metrics } = request;
    if (lifetime) return summarizeTotals(await this.#store.lifetime(workload.workloadId), metrics);
    const from = Math.ceil(window.from / this.#widthMs) * this.#widthMs;
    const totals = await this.#store.window(workload.workloadId, { from, to: window.to });
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
    return result;
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
