// The two phases the full-scale benchmark waits through, read from outside the service as an operator
// would: its /readyz, its own gauges (/metrics) and its /proc figures. Nothing here reaches into the
// service, so what is measured is the one process with every part of its load at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { scrape, sumOf, type Series } from './metrics-text.js';
import type { ProcessMemory, ServiceProcess } from './service-process.js';

export interface SyncPhase {
  /** Spawn → /readyz 200 (every informer of every cluster listed). */
  readySeconds: number;
  /** Spawn → the index holding the pre-filled rows and every synced workload, nothing pending. */
  indexedSeconds: number;
  rows: number;
  memoryAtReady: ProcessMemory | null;
  memoryAtIndexed: ProcessMemory | null;
}

export interface TickPhase {
  /** Whole ticks counted after every exporter was known, each with the samples it brought. */
  ticks: { samples: number; secondsSinceReady: number; memory: ProcessMemory | null }[];
  /** gpucap_scrape_failures_total over the counted ticks: must be 0. */
  failures: number;
  memoryAfterTicks: ProcessMemory | null;
}

/** The service's own figures at one moment (its /metrics). */
export interface ServiceGauges {
  indexRows: number;
  exporters: number;
  exportersFailing: number;
  telemetryGpus: number;
  attributedGpus: number;
  telemetryWorkloads: number;
  gpuPods: number;
  ringBytes: number;
  ringReservedBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  lastTickSeconds: number;
}

const POLL_MS = 250;

export function gaugesOf(series: readonly Series[]): ServiceGauges {
  const sum = (name: string) => sumOf(series, name);
  return {
    indexRows: sum('gpucap_index_workloads'),
    exporters: sum('gpucap_exporters'),
    exportersFailing: sum('gpucap_exporters_failing'),
    telemetryGpus: sum('gpucap_telemetry_gpus'),
    attributedGpus: sum('gpucap_telemetry_attributed_gpus'),
    telemetryWorkloads: sum('gpucap_telemetry_workloads'),
    gpuPods: sum('gpucap_telemetry_gpu_pods'),
    ringBytes: sum('gpucap_telemetry_ring_bytes'),
    ringReservedBytes: sum('gpucap_telemetry_ring_reserved_bytes'),
    heapUsedBytes: sum('gpucap_nodejs_heap_size_used_bytes'),
    heapTotalBytes: sum('gpucap_nodejs_heap_size_total_bytes'),
    externalBytes: sum('gpucap_nodejs_external_memory_bytes'),
    lastTickSeconds: sum('gpucap_sampler_tick_seconds'),
  };
}

async function isReady(service: ServiceProcess): Promise<boolean> {
  const response = await fetch(`${service.adminUrl}/readyz`);
  await response.arrayBuffer();
  return response.status === 200;
}

/** Polls until /readyz answers 200 and the index holds `expectedRows` with nothing pending. */
export async function waitForSync(service: ServiceProcess, expectedRows: number, timeoutSeconds: number): Promise<SyncPhase> {
  const deadline = service.spawnedAt + timeoutSeconds * 1000;
  let readyAt: number | undefined;
  let indexedAt: number | undefined;
  let memoryAtReady: ProcessMemory | null = null;
  let memoryAtIndexed: ProcessMemory | null = null;
  let rows = 0;
  while (readyAt === undefined || indexedAt === undefined) {
    if (performance.now() > deadline) throw new Error(`The service did not sync within ${timeoutSeconds} s (ready: ${readyAt !== undefined}, rows ${rows} of ${expectedRows})`);
    if (readyAt === undefined && (await isReady(service))) {
      readyAt = performance.now();
      memoryAtReady = service.memory();
    }
    const series = await scrape(service.adminUrl);
    rows = sumOf(series, 'gpucap_index_workloads');
    if (indexedAt === undefined && rows >= expectedRows && sumOf(series, 'gpucap_indexer_pending') === 0) {
      indexedAt = performance.now();
      memoryAtIndexed = service.memory();
    }
    await sleep(POLL_MS);
  }
  return { readySeconds: (readyAt - service.spawnedAt) / 1000, indexedSeconds: (indexedAt - service.spawnedAt) / 1000, rows, memoryAtReady, memoryAtIndexed };
}

/**
 * Waits until the service scrapes all `exporters`, then counts `count` whole ticks. The sampler exposes
 * no tick counter, so a tick is over when gpucap_scrape_samples_total has grown and then held still for
 * a second: a tick's scrapes come in one burst (a second or two for 1,250 exporters), then nothing
 * until the next interval. A tick cut short would show as fewer samples than the others.
 */
export async function countTicks(service: ServiceProcess, options: { exporters: number; count: number; intervalSeconds: number; readyAt: number }): Promise<TickPhase> {
  const deadline = performance.now() + (options.count + 4) * options.intervalSeconds * 1000 + 120_000;
  let series = await scrape(service.adminUrl);
  while (sumOf(series, 'gpucap_exporters') < options.exporters) {
    if (performance.now() > deadline) throw new Error(`The service knows ${sumOf(series, 'gpucap_exporters')} of ${options.exporters} exporters`);
    await sleep(POLL_MS);
    series = await scrape(service.adminUrl);
  }
  // The tick running when the last exporter appeared may have missed it: counting starts after it.
  const failuresBefore = sumOf(series, 'gpucap_scrape_failures_total');
  let counted = sumOf(series, 'gpucap_scrape_samples_total');
  let last = counted;
  let stillSince = performance.now();
  let skipFirst = true;
  const ticks: TickPhase['ticks'] = [];
  while (ticks.length < options.count) {
    if (performance.now() > deadline) throw new Error(`The sampler finished ${ticks.length} of ${options.count} ticks in time`);
    await sleep(POLL_MS);
    series = await scrape(service.adminUrl);
    const samples = sumOf(series, 'gpucap_scrape_samples_total');
    if (samples !== last) {
      last = samples;
      stillSince = performance.now();
      continue;
    }
    if (samples === counted || performance.now() - stillSince < 1000) continue;
    if (skipFirst) skipFirst = false;
    else ticks.push({ samples: samples - counted, secondsSinceReady: (performance.now() - options.readyAt) / 1000, memory: service.memory() });
    counted = samples;
  }
  return { ticks, failures: sumOf(series, 'gpucap_scrape_failures_total') - failuresBefore, memoryAfterTicks: service.memory() };
}
