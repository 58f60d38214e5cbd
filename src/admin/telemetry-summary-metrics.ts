// Prometheus series of shared telemetry (PostgreSQL): what the writer's buckets hold back from the
// database, read at scrape time. The rings' series stay at 0 there: no replica keeps rings.
import type { Registry } from 'prom-client';
import { gaugeFrom } from './collected-metrics.js';

export interface SummaryMetricSources {
  stats: () => { openBuckets: number; queuedBuckets: number; droppedRows: number; lateSamples: number };
}

export function registerTelemetrySummaryMetrics(registry: Registry, sources: SummaryMetricSources): void {
  const stat = (read: (s: ReturnType<SummaryMetricSources['stats']>) => number) => () => [{ labels: {}, value: read(sources.stats()) }];
  gaugeFrom(
    registry,
    'gpucap_telemetry_buckets_open',
    'Telemetry buckets still gathering samples on this replica (the current one, and one ending)',
    [],
    stat((s) => s.openBuckets),
  );
  gaugeFrom(
    registry,
    'gpucap_telemetry_buckets_queued',
    'Ended telemetry buckets waiting for the database; above 1 the database refuses them',
    [],
    stat((s) => s.queuedBuckets),
  );
  gaugeFrom(
    registry,
    'gpucap_telemetry_bucket_rows_dropped',
    'Per-workload bucket rows dropped since start because the database refused them for too long',
    [],
    stat((s) => s.droppedRows),
  );
  gaugeFrom(
    registry,
    'gpucap_telemetry_late_samples',
    'Samples dropped since start because their bucket had already been written',
    [],
    stat((s) => s.lateSamples),
  );
}
