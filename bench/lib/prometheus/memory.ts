// Memory readings of the two sides, taken before either holds a GPU series and again once the
// comparison window is over: our process (the service runs in it) after a forced GC, Prometheus
// from /proc and its own Go runtime metrics.
import { findGc } from '../telemetry/rings.js';
import type { PrometheusServer } from './server.js';

export interface OurMemory {
  rssBytes: number;
  heapUsedBytes: number;
  arrayBuffersBytes: number;
}

export interface PrometheusMemory {
  /** VmRSS from /proc/<pid>/status. */
  rssBytes: number | null;
  /** process_resident_memory_bytes, go_memstats_heap_inuse_bytes, prometheus_tsdb_head_series, … as Prometheus reports them. */
  self: Record<string, number>;
}

const SELF_METRICS = [
  'process_resident_memory_bytes',
  'go_memstats_heap_inuse_bytes',
  'go_memstats_heap_alloc_bytes',
  'prometheus_tsdb_head_series',
  'prometheus_tsdb_head_chunks',
  'prometheus_tsdb_head_samples_appended_total',
] as const;

export function readOurMemory(): OurMemory {
  findGc().gc?.();
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, heapUsedBytes: usage.heapUsed, arrayBuffersBytes: usage.arrayBuffers };
}

export async function readPrometheusMemory(prometheus: PrometheusServer): Promise<PrometheusMemory> {
  return { rssBytes: prometheus.rssBytes(), self: await prometheus.selfMetrics(SELF_METRICS) };
}

/** after − before, or null when either is unknown. */
export function delta(before: number | null | undefined, after: number | null | undefined): number | null {
  return before == null || after == null ? null : after - before;
}

/** bytes / count rounded to a byte, or null. */
export function per(bytes: number | null, count: number): number | null {
  return bytes === null || count <= 0 ? null : Math.round(bytes / count);
}
