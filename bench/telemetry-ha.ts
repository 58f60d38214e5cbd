// Benchmark of issue 16 item 3: "any replica answers any request with the same answer, GPU metrics and
// rankings included", measured both ways on the telemetry bench's data, on simulated time:
//   A  every replica scrapes every exporter into its own rings (as on SQLite): two replicas on
//      different scrape phases, and a replica restarted 30 min in; how far their answers are apart,
//      and what scraping twice costs;
//   B  the writer of the cluster folds samples into one-minute buckets in PostgreSQL and every replica
//      answers from them (shared telemetry): whether two readers agree, what the flush costs (at bench
//      scale and with 15,600 running workloads), WAL and table size, read latency with 24 h of
//      buckets, freshness.
// Then the decision rule of the brief: B if its read p99s are within 1.5× docs/performance.md's
// targets (metrics ≤ 10 ms, rankings ≤ 20 ms) and its flush costs under 5 % of a core; otherwise A.
// Writes bench/results/telemetry-ha.json (.quick.json for --quick). Needs PostgreSQL (PG_BIN).
// The simulation is in bench/lib/telemetry/ha-sim.ts, the database side in bench/lib/postgres/telemetry-ha.ts.
import { execFileSync } from 'node:child_process';
import { METRIC_NAMES, METRICS_TIME_RANGES, type MetricsTimeRange, type RankedMetricName } from '../src/domain/metrics.js';
import type { WorkloadView } from '../src/domain/workload.js';
import { PostgresGpuSummaries } from '../src/store/tooling.js';
import { SharedTelemetryReader } from '../src/telemetry/summaries/shared-telemetry.js';
import { summarize, timeCalls, type LatencySummary } from './lib/measure/load.js';
import { skippedWithoutPostgres } from './lib/postgres/required.js';
import { backendCpu, extendBucketsBack, measureFleetScale, startBenchPostgres, tableBytes, timedStore, walBytes, type FleetScaleResult } from './lib/postgres/telemetry-ha.js';
import { describeEnvironment, formatBytes, writeResults } from './lib/report/environment.js';
import { fixed, isEntryPoint } from './lib/report/format.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { CLUSTER_ID, GPUS_PER_NODE, planCluster, type ClusterPlan, type PlannedWorkload } from './lib/telemetry/cluster.js';
import type { DivergenceFigures, RankingFigures } from './lib/telemetry/ha-compare.js';
import { RANKED, SimClock, simulate, type SimResult, type SimSettings } from './lib/telemetry/ha-sim.js';

export const NAME = 'telemetry-ha';

interface Settings {
  nodes: number;
  bigJobNodes: number;
  sim: SimSettings;
  reads: { runs: number; warmup: number };
  fleet: { workloads: number; buckets: number; readRuns: number };
}

const SIM: SimSettings = {
  hours: 2,
  intervalSeconds: 15,
  phaseSeconds: 7,
  jitterMs: 1_500,
  askEverySeconds: 30,
  askedWorkloads: 50,
  restartAfterMinutes: 30,
  bucketSeconds: 60,
  flushEverySeconds: 5,
  graceMs: 11_000,
  values: { utilizationPoints: 10, framebufferMib: 2_000 },
};

/** The telemetry bench's reference scale: 1,250 exporters × 8 GPUs, one 512-GPU job. */
const FULL: Settings = { nodes: 1_250, bigJobNodes: 64, sim: SIM, reads: { runs: 200, warmup: 10 }, fleet: { workloads: 15_600, buckets: 62, readRuns: 30 } };
const QUICK: Settings = { nodes: 100, bigJobNodes: 64, sim: { ...SIM, askEverySeconds: 300 }, reads: { runs: 50, warmup: 5 }, fleet: { workloads: 2_000, buckets: 2, readRuns: 5 } };

/** docs/performance.md's targets and the brief's rule. */
const RULE = { metricsP99Ms: 10, rankingP99Ms: 20, latencyFactor: 1.5, flushCoreShare: 0.05 };

/** Simulated start: a whole hour, the same on every run. */
const START_MS = Date.UTC(2026, 10, 2, 0, 0, 0);
const HOUR_MS = 3_600_000;

function loadAverage(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return 'uptime unavailable';
  }
}

export async function runTelemetryHaBench(options: { quick: boolean; log?: (line: string) => void }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  const uptimeAtStart = loadAverage();
  const plan = planCluster(settings.nodes, { bigJobNodes: settings.bigJobNodes });
  const bigJob = plan.bigJob;
  if (bigJob === undefined) throw new Error('telemetry-ha needs the big job: bigJobNodes must be above 0');
  log(`${NAME}: ${settings.nodes} exporters × ${GPUS_PER_NODE} GPUs, ${plan.workloads.length} workloads, ${settings.sim.hours} simulated hours${options.quick ? ' (quick)' : ''}; ${uptimeAtStart}`);
  const skipped = skippedWithoutPostgres(NAME, { quick: options.quick, environment, log });
  if (skipped !== null) return skipped;

  const postgres = await startBenchPostgres();
  const started = performance.now();
  try {
    const measured = await measureBothWays(postgres, settings, { plan, bigJob }, log);
    const { sim, benchScale, fleet, readMs, rankingMs } = measured;
    const decision = decide(benchScale, fleet, readMs, rankingMs, settings.sim.bucketSeconds);
    const freshness = freshnessOf(settings.sim, sim);
    const uptimeAtEnd = loadAverage();
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    const results = {
      bench: NAME,
      ...environment,
      uptime: { atStart: uptimeAtStart, atEnd: uptimeAtEnd },
      parameters: { quick: options.quick, ...settings, rule: RULE, startMs: START_MS, exporters: settings.nodes, gpus: settings.nodes * GPUS_PER_NODE, workloads: plan.workloads.length, bigJob: { workloadId: bigJob.workloadId, gpus: bigJob.pods * GPUS_PER_NODE } },
      A: wayAResults(sim, settings.sim),
      B: {
        readers: sim.shared.readers,
        vsRingsSameSamples: sim.shared.vsRings,
        cost: { scrapesPerExporterPerMinute: 60 / settings.sim.intervalSeconds, writerCpuMsPerTick: sim.cost.cpuMsPerTick.writer, writerRingBytes: sim.cost.ringBytes.writer, lateSamples: sim.cost.lateSamples, flushCalls: sim.cost.flushes.calls, storingFlushes: sim.cost.flushes.storing },
        benchScale,
        fleetScale: fleet,
        reads: { with24hOfBuckets: true, summarize512GpuJob: readMs, rankingLastHour: rankingMs },
        freshness,
      },
      decision,
      seconds: { total: seconds, simulation: sim.seconds },
    };
    const resultsFile = writeResults(`${NAME}${options.quick ? '.quick' : ''}`, results);
    log(`${NAME}: ${decision.choice}: ${decision.reason}`);
    log(`${NAME}: results written to ${resultsFile}`);
    const requestErrors = sim.asks === 0 || sim.delays.buckets === 0 ? 1 : 0;
    return { name: NAME, resultsFile, requestErrors, table: tableOf(sim, benchScale, fleet, readMs, rankingMs, decision), notes: notesOf(sim, freshness.statement, uptimeAtStart, uptimeAtEnd, options.quick) };
  } finally {
    await postgres.server.stop();
  }
}

type BenchPostgres = Awaited<ReturnType<typeof startBenchPostgres>>;

/** The simulated hours (ways A and B), then B's reads over a day of buckets and its flush at fleet scale. */
async function measureBothWays(postgres: BenchPostgres, settings: Settings, cluster: { plan: ClusterPlan; bigJob: PlannedWorkload }, log: (line: string) => void) {
  const db = await postgres.database('gpucap');
  const writerPool = db.pool(1);
  const clock = new SimClock(START_MS);
  const timed = timedStore(new PostgresGpuSummaries({ primary: writerPool, readers: writerPool }), () => clock.now());
  const widthMs = settings.sim.bucketSeconds * 1000;
  const readerOf = () => {
    const pool = db.pool(2);
    return new SharedTelemetryReader(new PostgresGpuSummaries({ primary: pool, readers: pool }), { widthMs });
  };
  const readers: [SharedTelemetryReader, SharedTelemetryReader] = [readerOf(), readerOf()];
  const serverCpu = await backendCpu(writerPool);
  const sim = await simulate(cluster.plan, settings.sim, { store: timed.store, written: () => timed.times.written, readers, walBytes: () => walBytes(writerPool), serverCpuSeconds: serverCpu }, clock, log);
  log(`  simulation: ${sim.seconds} s, ${sim.asks} asks of ${sim.askedWorkloads} workloads × 4 ranges + 3 rankings`);

  // Bench scale, way B: sizes after the simulated hours, then a day of buckets for the reads.
  const twoHours = await tableBytes(writerPool);
  const rowsStored = timed.times.written.reduce((sum, w) => sum + w.rows, 0);
  const copies = Math.round(24 / settings.sim.hours) - 1;
  const copied = await extendBucketsBack(writerPool, settings.sim.hours * HOUR_MS, copies);
  const day = await tableBytes(writerPool);
  const now = sim.endMs;
  const { readMs, rankingMs } = await timeReads(readers[0], { workloadId: cluster.bigJob.workloadId, now, runs: settings.reads });
  const refreshMs = await timeCalls(() => timed.store.refreshLastHour(CLUSTER_ID, Math.floor(now / widthMs) * widthMs), { runs: Math.min(30, settings.reads.runs), warmup: 2 });
  log(`  B reads with 24 h of buckets (${(copied + rowsStored).toLocaleString('en-US')} rows): ${METRICS_TIME_RANGES.map((r) => `${r} p50 ${fixed(readMs[r].p50)} / p99 ${fixed(readMs[r].p99)} ms`).join(', ')}; ` +
    `rankings ${RANKED.map((m) => `${m} p99 ${fixed(rankingMs[m].p99)} ms`).join(', ')}; last-hour refresh p50 ${fixed(refreshMs.p50)} ms`);

  const fleetDb = await postgres.database('fleet');
  const fleet = await measureFleetScale(fleetDb, settings.fleet, START_MS, log);
  await fleetDb.close();
  await db.close();

  const flushes = sim.cost.flushes;
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);
  const benchScale = {
    workloads: cluster.plan.workloads.length,
    rowsPerBucket: Math.round(rowsStored / Math.max(1, timed.times.written.length)),
    rowsPerHour: Math.round(rowsStored / settings.sim.hours),
    flushMs: summarize(flushes.flushMs),
    writeMs: summarize(timed.times.writeMs),
    refreshDuringSimMs: summarize(timed.times.refreshMs),
    refreshWith24hMs: refreshMs,
    clientCpuMsPerBucket: Math.round(mean(flushes.clientCpuMs) * 10) / 10,
    serverCpuMsPerBucket: Math.round(mean(flushes.serverCpuMs) * 10) / 10,
    walBytesPerBucket: Math.round(mean(flushes.walBytes)),
    tableBytesAfterSim: twoHours,
    tableBytesPerHourOfBuckets: Math.round((twoHours.workload_gpu_buckets ?? 0) / settings.sim.hours),
    tableBytesWith24h: day,
    rowsWith24h: copied + rowsStored,
  };
  return { sim, benchScale, fleet, readMs, rankingMs };
}

/** The 512-GPU job's summaries over every range, and the last-hour rankings, as one reader answers them. */
async function timeReads(reader: SharedTelemetryReader, at: { workloadId: string; now: number; runs: Settings['reads'] }) {
  const { now } = at;
  const workload = { workloadId: at.workloadId } as WorkloadView;
  const hours: Record<MetricsTimeRange, number> = { last_1h: 1, last_6h: 6, last_24h: 24, job_lifetime: 0 };
  const readMs = {} as Record<MetricsTimeRange, LatencySummary>;
  for (const range of METRICS_TIME_RANGES) {
    const lifetime = range === 'job_lifetime';
    const request = { workload, window: { from: lifetime ? START_MS : now - hours[range] * HOUR_MS, to: now }, lifetime, metrics: METRIC_NAMES };
    readMs[range] = await timeCalls(() => reader.summarize(request), at.runs);
  }
  const rankingMs = {} as Record<RankedMetricName, LatencySummary>;
  for (const metric of RANKED) rankingMs[metric] = await timeCalls(() => reader.lastHour(metric, now), at.runs);
  return { readMs, rankingMs };
}

function freshnessOf(sim: SimSettings, result: SimResult) {
  return {
    statement: `a sample becomes visible when its bucket (${sim.bucketSeconds} s) has ended, the grace (${sim.graceMs / 1000} s: scrape timeout + 1 s) has passed and the writer's next flush (every ${sim.flushEverySeconds} s) has run: ` +
      `at most ${sim.bucketSeconds} + ${sim.graceMs / 1000} + ${sim.flushEverySeconds} s after it was taken (plus the flush's own duration), at least ${sim.graceMs / 1000} s`,
    boundSeconds: sim.bucketSeconds + sim.graceMs / 1000 + sim.flushEverySeconds,
    measured: result.delays,
    stalenessAtAsks: result.staleness,
  };
}

function wayAResults(sim: SimResult, settings: SimSettings) {
  return {
    twoReplicas: sim.twoReplicas,
    restarted: sim.restarted,
    cost: {
      scrapesPerExporterPerMinute: { perReplica: 60 / settings.intervalSeconds, twoReplicas: (2 * 60) / settings.intervalSeconds },
      cpuMsPerTickPerReplica: { r1: sim.cost.cpuMsPerTick.r1, r2: sim.cost.cpuMsPerTick.r2 },
      ringBytesPerReplica: sim.cost.ringBytes.r1,
      ringBytes: sim.cost.ringBytes,
      telemetry: sim.cost.telemetryStats.r1,
    },
  };
}

interface BenchScale {
  rowsPerBucket: number;
  flushMs: LatencySummary;
  clientCpuMsPerBucket: number;
  serverCpuMsPerBucket: number;
}

interface Decision {
  choice: 'B' | 'A';
  reason: string;
  metricsWorstP99Ms: number;
  rankingsWorstP99Ms: number;
  metricsLimitMs: number;
  rankingsLimitMs: number;
  /** (client + server backend CPU per bucket) ÷ bucket width, at bench and fleet scale. */
  flushCoreShare: { bench: number; fleet: number };
  /** Mean flush wall time ÷ bucket width (an upper bound when the machine is busy). */
  flushWallShare: { bench: number; fleet: number };
  met: { metrics: boolean; rankings: boolean; flushBench: boolean; flushFleet: boolean };
}

function decide(bench: BenchScale, fleet: FleetScaleResult, readMs: Record<MetricsTimeRange, LatencySummary>, rankingMs: Record<RankedMetricName, LatencySummary>, bucketSeconds: number): Decision {
  const widthMs = bucketSeconds * 1000;
  const metricsWorstP99Ms = Math.max(...METRICS_TIME_RANGES.map((r) => readMs[r].p99));
  const rankingsWorstP99Ms = Math.max(...RANKED.map((m) => rankingMs[m].p99));
  const metricsLimitMs = RULE.metricsP99Ms * RULE.latencyFactor;
  const rankingsLimitMs = RULE.rankingP99Ms * RULE.latencyFactor;
  const share = (ms: number) => Math.round((ms / widthMs) * 10_000) / 10_000;
  const flushCoreShare = { bench: share(bench.clientCpuMsPerBucket + bench.serverCpuMsPerBucket), fleet: share(fleet.clientCpuMsPerBucket + fleet.serverCpuMsPerBucket) };
  const flushWallShare = { bench: share(bench.flushMs.mean), fleet: share(fleet.flushMs.mean) };
  const met = {
    metrics: metricsWorstP99Ms <= metricsLimitMs,
    rankings: rankingsWorstP99Ms <= rankingsLimitMs,
    flushBench: flushCoreShare.bench < RULE.flushCoreShare,
    flushFleet: flushCoreShare.fleet < RULE.flushCoreShare,
  };
  const choice = met.metrics && met.rankings && met.flushBench ? 'B' : 'A';
  const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
  const reason =
    `B's worst read p99: metrics ${fixed(metricsWorstP99Ms)} ms (limit ${metricsLimitMs} ms: ${met.metrics ? 'within' : 'over'}), rankings ${fixed(rankingsWorstP99Ms)} ms (limit ${rankingsLimitMs} ms: ${met.rankings ? 'within' : 'over'}); ` +
    `flush ${pct(flushCoreShare.bench)} of a core at bench scale (${bench.rowsPerBucket} rows per bucket; limit ${pct(RULE.flushCoreShare)}: ${met.flushBench ? 'under' : 'over'}), ` +
    `${pct(flushCoreShare.fleet)} with ${fleet.workloads.toLocaleString('en-US')} workloads (${met.flushFleet ? 'under' : 'over'})` +
    (choice === 'A' ? '; A keeps its measured divergence' : '');
  return { choice, reason, metricsWorstP99Ms, rankingsWorstP99Ms, metricsLimitMs, rankingsLimitMs, flushCoreShare, flushWallShare, met };
}

const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
const rel = (v: number) => `${(v * 100).toFixed(2)} %`;

function divergenceRow(label: string, d: DivergenceFigures | RankingFigures): string[] {
  const ranking = 'top20Overlap' in d ? `; top-20 overlap min ${pct(d.top20Overlap.min)}, tau min ${d.kendallTau.min.toFixed(3)}` : '';
  const byStat = 'byStat' in d && d.byStat !== undefined ? ` (${Object.entries(d.byStat).map(([stat, f]) => `${stat} ${rel(f.max)}/${rel(f.p99)}`).join(', ')})` : '';
  return [label, `identical ${pct(d.identicalShare)}`, `max ${rel(d.maxRelativeDifference)}, p99 ${rel(d.p99RelativeDifference)}${byStat}${ranking}`];
}

function tableOf(
  sim: SimResult,
  bench: BenchScale & { walBytesPerBucket: number; rowsPerHour: number; tableBytesPerHourOfBuckets: number; refreshWith24hMs: LatencySummary },
  fleet: FleetScaleResult,
  readMs: Record<MetricsTimeRange, LatencySummary>,
  rankingMs: Record<RankedMetricName, LatencySummary>,
  decision: Decision,
): BenchOutcome['table'] {
  const rows: string[][] = [];
  for (const range of METRICS_TIME_RANGES) rows.push(['A', ...divergenceRow(`R1 vs R2 ${range}`, sim.twoReplicas.summaries[range])]);
  for (const metric of RANKED) rows.push(['A', ...divergenceRow(`R1 vs R2 ranking ${metric}`, sim.twoReplicas.rankings[metric])]);
  for (const range of METRICS_TIME_RANGES) rows.push(['A', ...divergenceRow(`restarted vs warm (same schedule) ${range}`, sim.restarted.vsSameSchedule.summaries[range])]);
  for (const metric of RANKED) rows.push(['A', ...divergenceRow(`restarted vs warm ranking ${metric}`, sim.restarted.vsSameSchedule.rankings[metric])]);
  rows.push(['A', 'cost per replica', `4 scrapes/exporter/min (×2), ${sim.cost.cpuMsPerTick.r1} ms CPU per tick, rings ${formatBytes(sim.cost.ringBytes.r1)}`]);
  for (const range of METRICS_TIME_RANGES) rows.push(['B', ...divergenceRow(`reader 1 vs reader 2 ${range}`, sim.shared.readers.summaries[range])]);
  for (const metric of RANKED) rows.push(['B', ...divergenceRow(`reader 1 vs reader 2 ranking ${metric}`, sim.shared.readers.rankings[metric])]);
  for (const range of METRICS_TIME_RANGES) rows.push(['B', ...divergenceRow(`B vs rings, same samples ${range}`, sim.shared.vsRings.summaries[range])]);
  rows.push(['B', `flush per bucket, bench scale (${bench.rowsPerBucket} rows)`, `p50 ${fixed(bench.flushMs.p50)} / p99 ${fixed(bench.flushMs.p99)} ms; CPU ${bench.clientCpuMsPerBucket} + ${bench.serverCpuMsPerBucket} ms; WAL ${formatBytes(bench.walBytesPerBucket)}`]);
  rows.push(['B', 'rows and table per hour, bench scale', `${bench.rowsPerHour.toLocaleString('en-US')} rows, ${formatBytes(bench.tableBytesPerHourOfBuckets)}; last-hour refresh p50 ${fixed(bench.refreshWith24hMs.p50)} ms`]);
  rows.push(['B', `flush per bucket, ${fleet.workloads.toLocaleString('en-US')} workloads`, `p50 ${fixed(fleet.flushMs.p50)} / p99 ${fixed(fleet.flushMs.p99)} ms (refresh p50 ${fixed(fleet.refreshMs.p50)}); CPU ${fleet.clientCpuMsPerBucket} + ${fleet.serverCpuMsPerBucket} ms; WAL ${formatBytes(fleet.walBytesPerBucket)}`]);
  rows.push(['B', `rows and table per hour, ${fleet.workloads.toLocaleString('en-US')} workloads`, `${fleet.rowsPerHour.toLocaleString('en-US')} rows, ${formatBytes(fleet.tableBytesPerHourOfBuckets)}`]);
  for (const range of METRICS_TIME_RANGES) rows.push(['B', `read 512-GPU job ${range} (24 h of buckets)`, `p50 ${fixed(readMs[range].p50)} / p99 ${fixed(readMs[range].p99)} ms`]);
  for (const metric of RANKED) rows.push(['B', `read ranking ${metric}`, `p50 ${fixed(rankingMs[metric].p50)} / p99 ${fixed(rankingMs[metric].p99)} ms`]);
  rows.push(['decision', decision.choice, decision.reason]);
  return { header: ['way', 'figure', 'value', 'details'], rows: rows.map((r) => (r.length === 3 ? [r[0] ?? '', r[1] ?? '', r[2] ?? '', ''] : r)) };
}

function notesOf(sim: SimResult, freshness: string, uptimeAtStart: string, uptimeAtEnd: string, quick: boolean): string[] {
  return [
    `load: at start "${uptimeAtStart}", at end "${uptimeAtEnd}" (a shared 2-core machine: latencies and CPU figures move with it)`,
    `A: R2 ticks ${SIM.phaseSeconds} s after R1, every exporter read a fixed 0–${SIM.jitterMs / 1000} s after its replica's tick; values move ±${SIM.values.utilizationPoints} points of utilization and ±${SIM.values.framebufferMib} MiB of framebuffer from second to second`,
    `A: the restarted replica (R3) follows R2's schedule from minute ${sim.restarted.startedAtMinute}, with no saved lifetime totals (a new pod); compared with R2 it shows the restart alone, with R1 what a client moving between replicas sees (in the results file)`,
    'B: reads are the telemetry port in process (SharedTelemetryReader over its own pool), without HTTP; the targets are for the endpoints',
    `B: freshness: ${freshness}`,
    ...(quick ? ['quick: 100 exporters, questions every 5 min, 2 fleet-scale buckets of 2,000 workloads (no full hour to refresh): the figures say nothing about the full scale'] : []),
  ];
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/telemetry-ha.ts [--quick]`
  runTelemetryHaBench({ quick: process.argv.includes('--quick') }).then(
    (outcome) => {
      for (const note of outcome.notes) console.log(`  ${note}`);
      process.exit(outcome.requestErrors > 0 ? 1 : 0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
