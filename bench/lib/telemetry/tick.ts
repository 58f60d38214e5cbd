// Part 1 of the telemetry benchmark: the sampler's tick over a fleet of simulated 8-GPU exporters.
//
// The fleet runs in a child process (fleet.ts); the service runs in this process
// (startService), because its telemetry state must be told about the exporter and GPU pods and the
// service only learns pods from an informer: in-process, one attach() + SYNC event does it, where a
// child service would need a simulated Kubernetes API serving 2,000 pods. This process does nothing
// else while the ticks run (it awaits), so the service has its event loop to itself, and
// process.cpuUsage() is the service's CPU (every thread: gunzip runs on libuv's pool).
//
// Tick boundaries come from the service itself: the sampler calls telemetry.targets() when a tick
// starts and telemetry.prune() once its scrapes have settled (main.ts's afterTick). Both are wrapped on
// the instance, so each tick's CPU is read at its exact start and end without polling; the wall time
// is the sampler's own (lastTick().durationMs, read through gpucap_sampler_tick_seconds).
import type { Registry } from 'prom-client';
import type { ExporterTarget } from '../../../src/telemetry/scrape/exporter-target.js';
import { summarize } from '../measure/load.js';
import { CLUSTER_ID, GPUS_PER_NODE, exporterPodOf, gpuPodOf, planCluster } from './cluster.js';
import { startFleetProcess } from './fleet.js';
import { startBenchService } from './service.js';

export interface TickSettings {
  nodes: number;
  bigJobNodes: number;
  intervalSeconds: number;
  /** Ticks measured after the first (cold: it opens every connection and meets every workload). */
  ticks: number;
}

export interface TickMeasure {
  /** The sampler's wall time of the tick (lastTick().durationMs). */
  wallMs: number;
  /** targets() → prune(): the sampler's time plus listing the targets and settling the statuses. */
  hookWallMs: number;
  /** The tick outlasted the interval or ran into one that did: its CPU and samples include the other's. */
  overlapped: boolean;
  exporters: number;
  /** Service CPU (user + system) from the tick's start to its end. */
  cpuSeconds: number;
  /** Service CPU from the previous tick's end to this one's: a whole interval's cost (the cold tick's includes declaring the pods). */
  intervalCpuSeconds: number | null;
  /** The fleet child's CPU during the tick. */
  fleetCpuSeconds: number | null;
  samples: number;
  /** Exporters whose last scrape failed at the tick's end, and scrape failures counted during it. */
  failingExporters: number;
  failures: number;
  /** Full (mark-compact) collections of the process during the tick, and the time of every collection (prom-client's gpucap_nodejs_gc_duration_seconds). */
  majorGcs: number;
  gcMs: number;
}

export interface TickResult {
  exporters: number;
  gpus: number;
  intervalSeconds: number;
  concurrency: number;
  fleet: { startupSeconds: number; rssBytes: number | null };
  cold: TickMeasure;
  ticks: TickMeasure[];
  summary: {
    wallMs: { median: number; max: number };
    cpuSeconds: { median: number; max: number };
    intervalCpuSeconds: { median: number; max: number } | null;
    fleetCpuSeconds: { median: number; max: number } | null;
    samplesPerTick: number;
  };
  /** Scrape failures (gpucap_scrape_failures_total) over every tick with exporters, the cold one included: must be 0. */
  failures: number;
  telemetry: { gpus: number; attributedGpus: number; workloads: number; ringBytes: number; ringReservedBytes: number; exporters: number; gpuPods: number };
  serviceMemory: NodeJS.MemoryUsage;
}

/** The sampler's default scrape_concurrency, left as it is. */
const CONCURRENCY = 32;

export async function measureTicks(settings: TickSettings, log: (line: string) => void): Promise<TickResult> {
  const plan = planCluster(settings.nodes, { bigJobNodes: settings.bigJobNodes });
  const fleet = await startFleetProcess({ nodes: settings.nodes, bigJobNodes: settings.bigJobNodes });
  log(`  tick: fleet of ${settings.nodes} exporters (pid ${fleet.pid}) listening on port ${fleet.port} after ${(fleet.startupMs / 1000).toFixed(1)} s`);
  try {
    const bench = await startBenchService({
      env: {
        GPUCAP_EXPORTER_PORT: String(fleet.port),
        GPUCAP_SCRAPE_INTERVAL_SECONDS: String(settings.intervalSeconds),
        GPUCAP_SCRAPE_CONCURRENCY: String(CONCURRENCY),
      },
    });
    try {
      const probe = new TickProbe(bench.service.metrics.registry, fleet.cpuSeconds);
      const { telemetry } = bench;
      const targets = telemetry.targets.bind(telemetry);
      const prune = telemetry.prune.bind(telemetry);
      telemetry.targets = function* (): Generator<ExporterTarget> {
        const list = [...targets()];
        probe.started(list.length);
        yield* list;
      };
      telemetry.prune = (at: number): void => {
        prune(at);
        probe.ended(at);
      };

      const pods = plan.nodes.flatMap((node) => {
        const ip = fleet.ips.get(node.hostname);
        if (ip === undefined) throw new Error(`The exporter fleet reported no address for node "${node.hostname}"`);
        return [gpuPodOf(node), exporterPodOf(node, ip)];
      });
      const attached = telemetry.attach({ clusterId: CLUSTER_ID });
      attached.onEvent('pods', { type: 'SYNC', items: pods }, undefined);
      const deadlineMs = (settings.ticks + 4) * settings.intervalSeconds * 1000 + 120_000;
      const measured = await probe.collect(settings.ticks + 1, deadlineMs);
      const [cold, ...ticks] = measured;
      if (cold === undefined) throw new Error('The sampler reported no tick');
      for (const [i, tick] of measured.entries()) {
        log(`  tick ${i === 0 ? 'cold' : i}: ${tick.wallMs} ms, CPU ${tick.cpuSeconds.toFixed(3)} s (interval ${tick.intervalCpuSeconds?.toFixed(3) ?? 'n/a'} s), ` +
          `fleet CPU ${tick.fleetCpuSeconds?.toFixed(2) ?? 'n/a'} s, ${tick.exporters} exporters, ${tick.samples} samples, ${tick.failures} failures, ` +
          `${tick.majorGcs} mark-compacts (GC ${tick.gcMs} ms)${tick.overlapped ? ', OVERLAPPED another tick' : ''}`);
      }
      const stats = telemetry.stats();
      attached.detach();
      const spread = (values: number[]) => ({ median: summarize(values).p50, max: Math.max(...values) });
      const intervalCpu = ticks.flatMap((t) => (t.intervalCpuSeconds === null ? [] : [t.intervalCpuSeconds]));
      const fleetCpu = ticks.flatMap((t) => (t.fleetCpuSeconds === null ? [] : [t.fleetCpuSeconds]));
      return {
        exporters: settings.nodes,
        gpus: settings.nodes * GPUS_PER_NODE,
        intervalSeconds: settings.intervalSeconds,
        concurrency: CONCURRENCY,
        fleet: { startupSeconds: round(fleet.startupMs / 1000), rssBytes: fleet.rssBytes() },
        cold,
        ticks,
        summary: {
          wallMs: spread(ticks.map((t) => t.wallMs)),
          cpuSeconds: spread(ticks.map((t) => t.cpuSeconds)),
          intervalCpuSeconds: intervalCpu.length === 0 ? null : spread(intervalCpu),
          fleetCpuSeconds: fleetCpu.length === 0 ? null : spread(fleetCpu),
          samplesPerTick: summarize(ticks.map((t) => t.samples)).p50,
        },
        failures: measured.reduce((sum, t) => sum + t.failures, 0),
        telemetry: stats,
        serviceMemory: process.memoryUsage(),
      };
    } finally {
      await bench.stop();
    }
  } finally {
    await fleet.stop();
  }
}

interface TickCounters {
  tickMs: number;
  samples: number;
  failures: number;
  failing: number;
  majorGcs: number;
  gcSeconds: number;
}

interface OpenTick {
  /** Date.now() when the tick listed its targets: within a millisecond or two of its `at`. */
  at: number;
  began: number;
  cpu: NodeJS.CpuUsage;
  fleetCpu: number | null;
  exporters: number;
}

/** Follows the sampler's ticks: what the wrapped targets()/prune() report, plus the service's counters. */
class TickProbe {
  readonly #registry: Registry;
  readonly #fleetCpu: () => number | null;
  /**
   * Ticks started and not ended. A tick that outlasts the interval overlaps the next (the sampler
   * does not wait for it): prune(at) is then matched to its tick by `at`, and both are flagged.
   */
  readonly #open: OpenTick[] = [];
  readonly #overlapping = new Set<OpenTick>();
  #lastEndCpu: NodeJS.CpuUsage | null = null;
  #lastCounters: TickCounters | null = null;
  #reads: Promise<unknown> = Promise.resolve();
  readonly #done: Promise<TickMeasure>[] = [];
  #wake: (() => void) | null = null;

  constructor(registry: Registry, fleetCpu: () => number | null) {
    this.#registry = registry;
    this.#fleetCpu = fleetCpu;
  }

  started(exporters: number): void {
    const open: OpenTick = { at: Date.now(), began: performance.now(), cpu: process.cpuUsage(), fleetCpu: this.#fleetCpu(), exporters };
    if (this.#open.length > 0) for (const tick of [...this.#open, open]) this.#overlapping.add(tick);
    this.#open.push(open);
  }

  ended(at: number): void {
    let index = -1;
    for (let i = 0; i < this.#open.length; i += 1) {
      const distance = Math.abs((this.#open[i]?.at ?? Infinity) - at);
      if (index < 0 || distance < Math.abs((this.#open[index]?.at ?? Infinity) - at)) index = i;
    }
    const [open] = index < 0 ? [] : this.#open.splice(index, 1);
    if (open === undefined) return;
    const overlapped = this.#overlapping.delete(open);
    const endedAt = performance.now();
    const cpu = process.cpuUsage();
    const fleetCpu = this.#fleetCpu();
    const previousEnd = this.#lastEndCpu;
    this.#lastEndCpu = cpu;
    // One read at a time, in tick order, so each delta is against the previous tick's end.
    const read = this.#reads.then(async () => {
      const previous = this.#lastCounters;
      const counters = await this.#readCounters();
      this.#lastCounters = counters;
      return { counters, previous };
    });
    this.#reads = read;
    // Ticks before the pods were declared scrape nothing: they only set the baselines.
    if (open.exporters === 0) return;
    this.#done.push(
      read.then(({ counters, previous }) => ({
        wallMs: counters.tickMs,
        hookWallMs: Math.round(endedAt - open.began),
        overlapped,
        exporters: open.exporters,
        cpuSeconds: cpuSeconds(open.cpu, cpu),
        intervalCpuSeconds: previousEnd === null ? null : cpuSeconds(previousEnd, cpu),
        fleetCpuSeconds: fleetCpu === null || open.fleetCpu === null ? null : round(fleetCpu - open.fleetCpu),
        samples: counters.samples - (previous?.samples ?? 0),
        failingExporters: counters.failing,
        failures: counters.failures - (previous?.failures ?? 0),
        majorGcs: counters.majorGcs - (previous?.majorGcs ?? 0),
        gcMs: Math.round((counters.gcSeconds - (previous?.gcSeconds ?? 0)) * 1000),
      })),
    );
    this.#wake?.();
  }

  /** Waits for `count` ticks that had exporters; throws after `timeoutMs`. */
  async collect(count: number, timeoutMs: number): Promise<TickMeasure[]> {
    const deadline = performance.now() + timeoutMs;
    while (this.#done.length < count) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`The sampler finished ${this.#done.length} of ${count} ticks with exporters within ${timeoutMs / 1000} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
    return Promise.all(this.#done.slice(0, count));
  }

  async #readCounters(): Promise<TickCounters> {
    const sum = async (name: string, series = (_: { metricName?: string; labels: Record<string, unknown> }) => true): Promise<number> => {
      const metric = this.#registry.getSingleMetric(name);
      if (metric === undefined) throw new Error(`The service registers no metric "${name}"`);
      const { values } = await metric.get();
      return values.reduce((total, v) => total + (series(v) ? v.value : 0), 0);
    };
    const gc = 'gpucap_nodejs_gc_duration_seconds';
    return {
      tickMs: Math.round((await sum('gpucap_sampler_tick_seconds')) * 1000),
      samples: await sum('gpucap_scrape_samples_total'),
      failures: await sum('gpucap_scrape_failures_total'),
      failing: await sum('gpucap_exporters_failing'),
      majorGcs: await sum(gc, (v) => v.metricName === `${gc}_count` && v.labels['kind'] === 'major'),
      gcSeconds: await sum(gc, (v) => v.metricName === `${gc}_sum`),
    };
  }
}

function cpuSeconds(from: NodeJS.CpuUsage, to: NodeJS.CpuUsage): number {
  return round((to.user - from.user + to.system - from.system) / 1e6, 3);
}

function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
