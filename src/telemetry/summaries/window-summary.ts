// Folds the samples of a window, across every GPU of a workload, into the API's summary: avg/min/max
// over every sample, current = mean of each GPU's latest sample (DECISIONS "Metrics"). Works in the
// rings' stored units and converts once at the end.
import { METRIC_NAMES, type MetricName, type MetricSummary } from '../../domain/metrics.js';
import { decodeMetric, METRIC_COUNT } from '../rings/metric-codec.js';
import { roundAverage } from './round-average.js';

export class WindowSummary {
  readonly #sum = new Float64Array(METRIC_COUNT);
  readonly #count = new Float64Array(METRIC_COUNT);
  readonly #min = new Float64Array(METRIC_COUNT).fill(Infinity);
  readonly #max = new Float64Array(METRIC_COUNT).fill(-Infinity);
  readonly #latestSum = new Float64Array(METRIC_COUNT);
  readonly #latestCount = new Float64Array(METRIC_COUNT);

  /** `count` samples of one slot whose stored values sum to `sum` and range over [min, max]. */
  add(slot: number, sum: number, count: number, min: number, max: number): void {
    this.#sum[slot] = (this.#sum[slot] ?? 0) + sum;
    this.#count[slot] = (this.#count[slot] ?? 0) + count;
    if (min < (this.#min[slot] ?? Infinity)) this.#min[slot] = min;
    if (max > (this.#max[slot] ?? -Infinity)) this.#max[slot] = max;
  }

  /** The latest stored value of one slot on one GPU (called at most once per GPU and slot). */
  addLatest(slot: number, stored: number): void {
    this.#latestSum[slot] = (this.#latestSum[slot] ?? 0) + stored;
    this.#latestCount[slot] = (this.#latestCount[slot] ?? 0) + 1;
  }

  hasSamples(slot: number): boolean {
    return (this.#count[slot] ?? 0) > 0;
  }

  summary(slot: number): MetricSummary {
    const count = this.#count[slot] ?? 0;
    if (count === 0) return { avg: null, min: null, max: null, current: null };
    const latestCount = this.#latestCount[slot] ?? 0;
    return {
      avg: roundAverage(decodeMetric(slot, (this.#sum[slot] ?? 0) / count)),
      min: decodeMetric(slot, this.#min[slot] ?? 0),
      max: decodeMetric(slot, this.#max[slot] ?? 0),
      current: latestCount === 0 ? null : roundAverage(decodeMetric(slot, (this.#latestSum[slot] ?? 0) / latestCount)),
    };
  }

  summaries(metrics: readonly MetricName[]): Record<MetricName, MetricSummary> {
    const result = {} as Record<MetricName, MetricSummary>;
    for (const name of metrics) result[name] = this.summary(METRIC_NAMES.indexOf(name));
    return result;
  }
}
