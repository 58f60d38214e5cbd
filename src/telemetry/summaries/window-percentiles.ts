// Adds the asked percentiles (`pNN`) to each metric's summary once a read has counted its values into
// the shared histograms: decoded to the metric's unit and rounded as averages are. A percentile is
// null when nothing was counted, or when what was counted is not every sample it must stand for
// (`complete`: job_lifetime, whose older samples may have left the rings).
import { METRIC_NAMES, type MetricName, type MetricSummary } from '../../domain/metrics.js';
import { percentileKey, type Percentile } from '../../domain/percentiles.js';
import { decodeMetric } from '../rings/metric-codec.js';
import type { PercentileHistograms } from './percentile-histogram.js';
import { roundAverage } from './round-average.js';

export function addPercentiles(
  summaries: Record<MetricName, MetricSummary>,
  request: { metrics: readonly MetricName[]; percentiles: readonly Percentile[] },
  histograms: PercentileHistograms,
  complete: (slot: number, counted: number) => boolean = () => true,
): Record<MetricName, MetricSummary> {
  for (const name of request.metrics) {
    const slot = METRIC_NAMES.indexOf(name);
    const counted = histograms.totals[slot] ?? 0;
    const stored = counted > 0 && complete(slot, counted) ? histograms.percentiles(slot, request.percentiles) : [];
    // A copy: a reader may hand out one shared object for every empty summary.
    const summary: MetricSummary = { ...summaries[name] };
    request.percentiles.forEach((percentile, i) => {
      const value = stored[i];
      summary[percentileKey(percentile)] = value === undefined ? null : roundAverage(decodeMetric(slot, value));
    });
    summaries[name] = summary;
  }
  return summaries;
}
