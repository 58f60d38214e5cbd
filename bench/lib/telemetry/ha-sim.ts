// The simulated two hours of bench/telemetry-ha.ts, on simulated time (nothing waits). Exporters of
// the telemetry bench's cluster (cluster.ts, payloads from payloads.ts with values
// that move from second to second) are scraped every 15 s by:
//   R1  a ring-mode GpuTelemetry (as on SQLite), ticks at phase 0, each exporter read a fixed jitter
//       after the tick;
//   R2  another, ticks at phase `phaseSeconds`, its own jitters: an independent pod (way A);
//   R3  R2's schedule, started `restartAfterMinutes` later from nothing: a restarted or new replica;
//   W   the shared-mode writer (way B): a GpuTelemetry into buckets, flushed every 5 s by a
//       SummaryFlusher into PostgreSQL; it scrapes on R1's schedule, so it sees exactly R1's samples.
// As the sampler does, a sample carries its tick's start time and is ingested once its scrape is in
// (tick + jitter). Every `askEverySeconds` of the second hour, every replica answers the same
// questions at the same `now`: summaries of the asked workloads over the 4 ranges, and the 3
// last-hour rankings; two SharedTelemetryReaders (each on its own pool) answer for way B.
import { METRIC_NAMES, METRICS_TIME_RANGES, type MetricsTimeRange, type RankedMetricName } from '../../../src/domain/metrics.js';
import type { LifetimeRepository } from '../../../src/domain/telemetry.js';
import type { WorkloadView } from '../../../src/domain/workload.js';
import type { TelemetryReader } from '../../../src/query/ports.js';
import { BucketAccumulator } from '../../../src/telemetry/sinks/bucket-accumulator.js';
import type { ExporterTarget } from '../../../src/telemetry/scrape/exporter-target.js';
import { rawSlotsFor } from '../../../src/telemetry/rings/gpu-rings.js';
import { GpuTelemetry, type GpuTelemetryOptions } from '../../../src/telemetry/gpu-telemetry.js';
import { LifetimeAccumulators } from '../../../src/telemetry/sinks/lifetime.js';
import { SummaryFlusher } from '../../../src/telemetry/sinks/summary-flusher.js';
import { CLUSTER_ID, gpuPodOf, exporterTargetOf, simNodeOf, type ClusterPlan } from './cluster.js';
import { RankingDivergence, SummaryDivergence, type DivergenceFigures, type RankingFigures } from './ha-compare.js';
import { gpuValueTexts, PayloadTemplate, type ValueJitter } from './payloads.js';

const HOUR_MS = 3_600_000;
export const RANKED: readonly RankedMetricName[] = ['gpu_utilization', 'memory_utilization', 'power_usage'];

export interface SimSettings {
  hours: number;
  intervalSeconds: number;
  /** R2's ticks start this much after R1's. */
  phaseSeconds: number;
  /** Each exporter is read a fixed delay in [0, this) after its replica's tick (its own per replica). */
  jitterMs: number;
  askEverySeconds: number;
  askedWorkloads: number;
  restartAfterMinutes: number;
  bucketSeconds: number;
  /** The writer's flush loop period (main.ts: min(bucket, 5 s)). */
  flushEverySeconds: number;
  /** The flusher's grace (main.ts: scrape timeout + 1 s; the timeout is 10 s at a 15 s interval). */
  graceMs: number;
  values: ValueJitter;
}

/** Simulated clock, moved by the loop. */
export class SimClock {
  constructor(public at: number) {}
  now(): number {
    return this.at;
  }
}

/** The lifetime totals of a replica that never saved any (a new pod, or SQLite's file gone). */
const NO_SAVED_LIFETIMES: LifetimeRepository = { loadLifetime: () => undefined, saveLifetimes: () => undefined };

const DISCOVERY: GpuTelemetryOptions['discovery'] = { selectors: ['app=nvidia-dcgm-exporter'], namespaces: ['gpu-operator'], port: 9400, path: '/metrics' };

/** One GpuTelemetry fed as the sampler would, with the CPU its ingests took. */
class Replica {
  readonly telemetry: GpuTelemetry;
  cpuMs = 0;
  ingests = 0;

  constructor(plan: ClusterPlan, intervalSeconds: number, samples: GpuTelemetryOptions['samples']) {
    this.telemetry = new GpuTelemetry({ discovery: DISCOVERY, gpuResources: ['nvidia.com/gpu'], rawSlots: rawSlotsFor(intervalSeconds), samples });
    this.telemetry.attach({ clusterId: CLUSTER_ID }).onEvent('pods', { type: 'SYNC', items: plan.nodes.map(gpuPodOf) }, undefined);
  }

  ingest(target: ExporterTarget, text: string, at: number): void {
    const before = process.cpuUsage();
    this.telemetry.ingest(target, text, at);
    const used = process.cpuUsage(before);
    this.cpuMs += (used.user + used.system) / 1000;
    this.ingests += 1;
  }
}

/** One replica's scrapes, in the order their payloads arrive: tick k at start + k·interval, exporter e at + jitter[e]. */
class ScrapeSchedule {
  readonly #order: number[];
  readonly #jitter: number[];
  #tick = 0;
  #position = 0;

  constructor(
    readonly startMs: number,
    readonly endMs: number,
    readonly intervalMs: number,
    exporters: number,
    options: { seed: number; jitterMs: number },
  ) {
    this.#jitter = Array.from({ length: exporters }, (_, e) => ((Math.imul(e + 1, 0x9e3779b1) ^ Math.imul(options.seed, 0x85ebca77)) >>> 0) % options.jitterMs);
    this.#order = Array.from({ length: exporters }, (_, e) => e).sort((a, b) => (this.#jitter[a] ?? 0) - (this.#jitter[b] ?? 0));
  }

  get tickAt(): number {
    return this.startMs + this.#tick * this.intervalMs;
  }

  /** When the next payload is in (Infinity once the schedule is over). */
  get nextAt(): number {
    return this.tickAt >= this.endMs ? Infinity : this.tickAt + (this.#jitter[this.exporter] ?? 0);
  }

  get exporter(): number {
    return this.#order[this.#position] ?? 0;
  }

  advance(): void {
    this.#position += 1;
    if (this.#position < this.#order.length) return;
    this.#position = 0;
    this.#tick += 1;
  }
}

export interface SimResult {
  startMs: number;
  endMs: number;
  askedWorkloads: number;
  asks: number;
  /** Way A: R1 vs R2, per range, and the 3 rankings. */
  twoReplicas: { summaries: Record<MetricsTimeRange, DivergenceFigures>; rankings: Record<RankedMetricName, RankingFigures> };
  /** R3 (restarted) vs R2 (same schedule: the restart alone) and vs R1 (what a client moving between replicas sees). */
  restarted: {
    startedAtMinute: number;
    vsSameSchedule: { summaries: Record<MetricsTimeRange, DivergenceFigures>; rankings: Record<RankedMetricName, RankingFigures> };
    vsOtherReplica: { summaries: Record<MetricsTimeRange, DivergenceFigures>; rankings: Record<RankedMetricName, RankingFigures> };
  };
  /** Way B: reader 1 vs reader 2, and reader 1 vs R1 (same samples: what whole buckets and their delay change). */
  shared: {
    readers: { summaries: Record<MetricsTimeRange, DivergenceFigures>; rankings: Record<RankedMetricName, RankingFigures> };
    vsRings: { summaries: Record<MetricsTimeRange, DivergenceFigures>; rankings: Record<RankedMetricName, RankingFigures> };
  };
  cost: {
    ticks: number;
    /** CPU (ms) of one replica's ingests per tick, all exporters. */
    cpuMsPerTick: { r1: number; r2: number; writer: number };
    ringBytes: { r1: number; r2: number; r3: number; writer: number };
    telemetryStats: { r1: ReturnType<GpuTelemetry['stats']>; writer: ReturnType<GpuTelemetry['stats']> };
    flushes: { calls: number; storing: number; flushMs: number[]; clientCpuMs: number[]; serverCpuMs: number[]; walBytes: number[] };
    lateSamples: number;
  };
  /** Answers at asks: how old the newest stored bucket's end was (ms), min and max. */
  staleness: { minMs: number; maxMs: number };
  /** Per stored bucket: from its start (its oldest samples) and its end (newest) to its write (ms). */
  delays: { fromBucketStartMaxMs: number; fromBucketEndMinMs: number; fromBucketEndMaxMs: number; buckets: number };
  seconds: number;
}

export interface SharedSide {
  /** The writer's store (timed); `written` lists the buckets stored and when. */
  store: ConstructorParameters<typeof SummaryFlusher>[0];
  written: () => readonly { bucketAt: number; at: number; rows: number }[];
  readers: [TelemetryReader, TelemetryReader];
  walBytes: () => Promise<number>;
  serverCpuSeconds: () => number;
}

const divergences = () => ({
  summaries: Object.fromEntries(METRICS_TIME_RANGES.map((r) => [r, new SummaryDivergence()])) as Record<MetricsTimeRange, SummaryDivergence>,
  rankings: Object.fromEntries(RANKED.map((m) => [m, new RankingDivergence()])) as Record<RankedMetricName, RankingDivergence>,
});
type Divergences = ReturnType<typeof divergences>;
const figuresOf = (d: Divergences) => ({
  summaries: Object.fromEntries(METRICS_TIME_RANGES.map((r) => [r, d.summaries[r].figures()])) as Record<MetricsTimeRange, DivergenceFigures>,
  rankings: Object.fromEntries(RANKED.map((m) => [m, d.rankings[m].figures()])) as Record<RankedMetricName, RankingFigures>,
});

/** The asked workloads: the big job first, then others evenly spread over the plan. */
export function askedWorkloadIds(plan: ClusterPlan, count: number): string[] {
  const ids = plan.workloads.map((w) => w.workloadId);
  const big = plan.bigJob?.workloadId;
  const others = ids.filter((id) => id !== big);
  const wanted = Math.min(count - (big === undefined ? 0 : 1), others.length);
  const picked = Array.from({ length: wanted }, (_, i) => others[Math.floor((i * others.length) / wanted)] as string);
  return big === undefined ? picked : [big, ...picked];
}

/** Runs from `clock`'s time for `settings.hours`, moving it. */
export async function simulate(plan: ClusterPlan, settings: SimSettings, shared: SharedSide, clock: SimClock, log: (line: string) => void): Promise<SimResult> {
  const began = performance.now();
  const startMs = clock.at;
  const intervalMs = settings.intervalSeconds * 1000;
  const endMs = startMs + settings.hours * HOUR_MS;
  const restartAt = startMs + settings.restartAfterMinutes * 60_000;
  const usageRules = { intervalSeconds: settings.intervalSeconds, idleThresholdPercent: 5 };
  const lifetimes = () => ({ lifetime: new LifetimeAccumulators(NO_SAVED_LIFETIMES, { clock, idleMs: 15 * 60_000, ...usageRules }) });
  const r1 = new Replica(plan, settings.intervalSeconds, lifetimes());
  const r2 = new Replica(plan, settings.intervalSeconds, lifetimes());
  let r3: Replica | undefined;
  const buckets = new BucketAccumulator({ widthMs: settings.bucketSeconds * 1000, ...usageRules });
  const writer = new Replica(plan, settings.intervalSeconds, { buckets });
  const flusher = new SummaryFlusher(shared.store, buckets, { graceMs: settings.graceMs, clock, clusters: () => [CLUSTER_ID], logger: { warn: (o, m) => log(`  !!! flusher: ${m ?? ''} ${JSON.stringify(o)}`) } });

  const exporters = plan.nodes.map((node) => ({ node, template: new PayloadTemplate(simNodeOf(node)), target: exporterTargetOf(node) }));
  const render = (e: number, readAt: number): { text: string; target: ExporterTarget } => {
    const exporter = exporters[e];
    if (exporter === undefined) throw new Error(`No exporter ${e}`);
    const { node, template } = exporter;
    const values = Array.from({ length: template.gpuCount }, (_, gpu) => gpuValueTexts(node.firstGpu + gpu, node.workload.ordinal, readAt / 1000, settings.values));
    return { text: template.render(values), target: exporter.target };
  };
  const s1 = new ScrapeSchedule(startMs, endMs, intervalMs, exporters.length, { seed: 1, jitterMs: settings.jitterMs });
  const s2 = new ScrapeSchedule(startMs + settings.phaseSeconds * 1000, endMs, intervalMs, exporters.length, { seed: 2, jitterMs: settings.jitterMs });

  const asked = askedWorkloadIds(plan, settings.askedWorkloads);
  const aVsA = divergences();
  const restartSame = divergences();
  const restartOther = divergences();
  const bReaders = divergences();
  const bVsRings = divergences();
  const flushes: SimResult['cost']['flushes'] = { calls: 0, storing: 0, flushMs: [], clientCpuMs: [], serverCpuMs: [], walBytes: [] };
  let staleMin = Infinity;
  let staleMax = -Infinity;
  let asks = 0;

  const flush = async (): Promise<void> => {
    flushes.calls += 1;
    const walBefore = await shared.walBytes();
    const serverBefore = shared.serverCpuSeconds();
    const cpuBefore = process.cpuUsage();
    const at = performance.now();
    const stored = await flusher.flush();
    const ms = performance.now() - at;
    if (stored === 0) return;
    const cpu = process.cpuUsage(cpuBefore);
    flushes.storing += 1;
    flushes.flushMs.push(ms);
    flushes.clientCpuMs.push((cpu.user + cpu.system) / 1000);
    flushes.serverCpuMs.push((shared.serverCpuSeconds() - serverBefore) * 1000);
    flushes.walBytes.push((await shared.walBytes()) - walBefore);
  };

  const ask = async (now: number): Promise<void> => {
    asks += 1;
    const newest = shared.written().at(-1);
    if (newest !== undefined) {
      const stale = now - (newest.bucketAt + settings.bucketSeconds * 1000);
      staleMin = Math.min(staleMin, stale);
      staleMax = Math.max(staleMax, stale);
    }
    const [b1, b2] = shared.readers;
    for (const workloadId of asked) {
      const workload = { workloadId } as WorkloadView;
      for (const range of METRICS_TIME_RANGES) {
        const hours = { last_1h: 1, last_6h: 6, last_24h: 24, job_lifetime: 0 }[range];
        const lifetime = range === 'job_lifetime';
        const request = { workload, window: lifetime ? { from: startMs, to: now } : { from: now - hours * HOUR_MS, to: now }, lifetime, metrics: METRIC_NAMES };
        const a1 = await r1.telemetry.summarize(request);
        const a2 = await r2.telemetry.summarize(request);
        const [x1, x2] = await Promise.all([b1.summarize(request), b2.summarize(request)]);
        aVsA.summaries[range].add(a1, a2);
        bReaders.summaries[range].add(x1, x2);
        bVsRings.summaries[range].add(x1, a1);
        if (r3 !== undefined) {
          const a3 = await r3.telemetry.summarize(request);
          restartSame.summaries[range].add(a3, a2);
          restartOther.summaries[range].add(a3, a1);
        }
      }
    }
    for (const metric of RANKED) {
      const a1 = await r1.telemetry.lastHour(metric, now);
      const a2 = await r2.telemetry.lastHour(metric, now);
      const [x1, x2] = await Promise.all([b1.lastHour(metric, now), b2.lastHour(metric, now)]);
      aVsA.rankings[metric].add(a1, a2);
      bReaders.rankings[metric].add(x1, x2);
      bVsRings.rankings[metric].add(x1, a1);
      if (r3 !== undefined) {
        const a3 = await r3.telemetry.lastHour(metric, now);
        restartSame.rankings[metric].add(a3, a2);
        restartOther.rankings[metric].add(a3, a1);
      }
    }
  };

  const flushEveryMs = settings.flushEverySeconds * 1000;
  const askEveryMs = settings.askEverySeconds * 1000;
  let nextFlush = startMs + flushEveryMs;
  let nextAsk = startMs + HOUR_MS + askEveryMs;
  let nextLog = startMs + 15 * 60_000;
  for (;;) {
    // At equal times: payloads first, then the flush, then the questions.
    const t = Math.min(s1.nextAt, s2.nextAt, nextFlush, nextAsk);
    if (t > endMs) break;
    clock.at = t;
    if (s1.nextAt === t) {
      const { text, target } = render(s1.exporter, t);
      r1.ingest(target, text, s1.tickAt);
      writer.ingest(target, text, s1.tickAt);
      s1.advance();
    } else if (s2.nextAt === t) {
      const { text, target } = render(s2.exporter, t);
      r2.ingest(target, text, s2.tickAt);
      if (s2.tickAt >= restartAt) {
        r3 ??= new Replica(plan, settings.intervalSeconds, lifetimes());
        r3.ingest(target, text, s2.tickAt);
      }
      s2.advance();
    } else if (nextFlush === t) {
      await flush();
      nextFlush += flushEveryMs;
    } else {
      await ask(t);
      nextAsk += askEveryMs;
    }
    if (t >= nextLog) {
      log(`  simulated ${((t - startMs) / 60_000).toFixed(0)} of ${settings.hours * 60} min (${((performance.now() - began) / 1000).toFixed(0)} s)`);
      nextLog += 15 * 60_000;
    }
  }

  const written = shared.written();
  const widthMs = settings.bucketSeconds * 1000;
  const ticks = r1.ingests / exporters.length;
  const perTick = (replica: Replica) => Math.round((replica.cpuMs / Math.max(1, replica.ingests / exporters.length)) * 10) / 10;
  return {
    startMs,
    endMs,
    askedWorkloads: asked.length,
    asks,
    twoReplicas: figuresOf(aVsA),
    restarted: { startedAtMinute: settings.restartAfterMinutes, vsSameSchedule: figuresOf(restartSame), vsOtherReplica: figuresOf(restartOther) },
    shared: { readers: figuresOf(bReaders), vsRings: figuresOf(bVsRings) },
    cost: {
      ticks,
      cpuMsPerTick: { r1: perTick(r1), r2: perTick(r2), writer: perTick(writer) },
      ringBytes: { r1: r1.telemetry.stats().ringBytes, r2: r2.telemetry.stats().ringBytes, r3: r3?.telemetry.stats().ringBytes ?? 0, writer: writer.telemetry.stats().ringBytes },
      telemetryStats: { r1: r1.telemetry.stats(), writer: writer.telemetry.stats() },
      flushes,
      lateSamples: flusher.stats().lateSamples,
    },
    staleness: { minMs: staleMin, maxMs: staleMax },
    delays: {
      fromBucketStartMaxMs: written.reduce((max, w) => Math.max(max, w.at - w.bucketAt), 0),
      fromBucketEndMinMs: written.reduce((min, w) => Math.min(min, w.at - w.bucketAt - widthMs), Infinity),
      fromBucketEndMaxMs: written.reduce((max, w) => Math.max(max, w.at - w.bucketAt - widthMs), 0),
      buckets: written.length,
    },
    seconds: Math.round((performance.now() - began) / 100) / 10,
  };
}
