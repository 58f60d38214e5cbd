// Benchmark "full-scale" of issue 17: the whole reference scale in ONE service process, measured rather
// than summed from parts. The real service (child process, bench/lib/service/service-process.ts) at once
//   - serves a copy of the 1M-row index (bench/data/generate-workloads.ts; --quick: 10k rows);
//   - watches the reference fleet of simulated clusters, 150k pods + 15k Jobs on 1,250 nodes over 4
//     clusters (the sync-ingest benchmark's fleet, each cluster in a child process; --quick: 5k pods
//     over 2), every node also running a dcgm-exporter pod (bench/lib/telemetry/full-scale-exporters.ts);
//   - scrapes those 1,250 exporters × 8 GPUs = 10,000 GPUs (--quick: 64 × 8) at the production interval,
//     served by a child process (bench/lib/telemetry/full-scale-fleet.ts), each GPU attributed to a pod the
//     simulated cluster runs on that node, so the telemetry lands on indexed workloads.
// Measured from /proc of the service: RSS at /readyz 200, once every row is indexed, after each of
// the first whole ticks over every exporter, and the peak (VmHWM); the service's own gauges (heap,
// ring bytes, rows, GPUs attributed); then the heap after a full collection. Issue 17's target, the
// whole process ≤ 1.5 GiB RSS, is printed with whether it is met; never asserted. Writes
// bench/results/full-scale[.quick].json. The full run takes longer than the others together allow,
// so `npm run bench` runs it only when named: `npm run bench -- --only full-scale`.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { QUICK_FLEET, REFERENCE_FLEET, type ClusterShape } from './data/generate-cluster.js';
import { BENCH_NOW, CACHE_DIR, ensureWorkloadsDb } from './data/generate-workloads.js';
import { startKubeSims, type KubeSim } from './lib/kube-sim/kube-sim.js';
import { benchCpuSeconds, cpuBetween, readCpu } from './lib/measure/cpu-meters.js';
import { describeEnvironment, formatBytes, writeResults } from './lib/report/environment.js';
import { isEntryPoint } from './lib/report/format.js';
import { AnonymousPeak } from './lib/service/full-scale-peaks.js';
import { countTicks, gaugesOf, waitForSync } from './lib/service/full-scale-phases.js';
import { slabResidency, type SlabResidency } from './lib/service/full-scale-rings.js';
import { scrape } from './lib/service/metrics-text.js';
import { startServiceProcess, type ServiceProcess } from './lib/service/service-process.js';
import { startFullScaleFleet, type FullScaleFleet } from './lib/telemetry/full-scale-fleet.js';
import { ORGANIZATION, fleetCounts, fleetSimSettings, writeFleetKubeconfigs } from './sync-ingest.js';
import type { BenchOutcome } from './lib/report/outcome.js';

export const NAME = 'full-scale';
/** Issue 17: the whole process at most 1.5 GiB RSS with everything held at once. */
export const TARGET_RSS_BYTES = 1.5 * 1024 ** 3;

export interface FullScaleSettings {
  /** Rows of the pre-filled index. */
  rows: number;
  /** The simulated fleet, split evenly over `clusters`. */
  shape: ClusterShape;
  clusters: number;
  /** GPUs each node's exporter reports. */
  gpusPerNode: number;
  scrapeIntervalSeconds: number;
  /** Whole ticks over every exporter measured after the sync. */
  ticks: number;
  syncTimeoutSeconds: number;
  /** Nice value of the simulated clusters' processes, as in sync-ingest: the service is served first. */
  simNiceness: number;
}

const FULL: FullScaleSettings = {
  rows: 1_000_000,
  shape: REFERENCE_FLEET.total,
  clusters: REFERENCE_FLEET.clusters,
  gpusPerNode: 8,
  // The production default: the raw ring holds an hour at the interval, so it sets the rings' size.
  scrapeIntervalSeconds: 15,
  ticks: 5,
  syncTimeoutSeconds: 600,
  simNiceness: 10,
};

const QUICK: FullScaleSettings = {
  rows: 10_000,
  shape: QUICK_FLEET.total,
  clusters: QUICK_FLEET.clusters,
  gpusPerNode: 8,
  scrapeIntervalSeconds: 2,
  ticks: 3,
  syncTimeoutSeconds: 180,
  simNiceness: 10,
};

/** Events each simulated API keeps for watches to resume from; nothing churns here. */
const HISTORY_LIMIT = 10_000;
const BOOKMARK_INTERVAL_MS = 5_000;

/** Each cluster's exporters get addresses from 127.<101 + cluster index>.0.1 on: a /16 each, away from the other fleets' 127.0.x.y. */
function exporterIpBase(clusterIndex: number): string {
  return `127.${101 + clusterIndex}.0.1`;
}

export interface FullScaleOptions {
  quick: boolean;
  /** Another shape (the test's tiny one); results then go to full-scale.custom.json. */
  overrides?: Partial<FullScaleSettings>;
  log?: (line: string) => void;
}

export async function runFullScaleBench(options: FullScaleOptions): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings: FullScaleSettings = { ...(options.quick ? QUICK : FULL), ...options.overrides };
  const environment = describeEnvironment();
  const n = (value: number) => value.toLocaleString('en-US');
  log(`${NAME}: one service with ${n(settings.rows)} rows pre-filled, ${n(settings.shape.pods)} pods + ${n(settings.shape.jobs)} jobs over ${settings.clusters} clusters, ` +
    `${n(settings.shape.nodes)} exporters × ${settings.gpusPerNode} GPUs every ${settings.scrapeIntervalSeconds} s${options.quick ? ' (quick)' : ''}; ` +
    `${environment.machine.cores} × ${environment.machine.cpuModel}, ${formatBytes(environment.machine.memoryBytes)}, Node ${environment.node}`);
  const [load1] = environment.loadAverageAtStart;
  if (load1 !== undefined && load1 > 1) log(`!!! WARNING: load average ${load1} before the start: other processes are busy and the figures will be noisy`);

  const began = performance.now();
  const dataset = await ensureWorkloadsDb(settings.rows, { log });
  const workDir = join(CACHE_DIR, `${NAME}-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const dbPath = join(workDir, 'index.db');
  // A copy: the service writes the synced workloads into it, and the cached dataset must stay as generated.
  copyFileSync(dataset.path, dbPath);

  // Every clock stands at BENCH_NOW, the instant the generated index is relative to; the simulated
  // clusters' objects are generated relative to it too.
  const clockOffsetMs = BENCH_NOW - Date.now();
  let sims: KubeSim[] = [];
  let fleet: FullScaleFleet | undefined;
  let service: ServiceProcess | undefined;
  let anonymousPeak: AnonymousPeak | undefined;
  try {
    let started = performance.now();
    const simSettings = fleetSimSettings({ ...settings, historyLimit: HISTORY_LIMIT, bookmarkIntervalMs: BOOKMARK_INTERVAL_MS }, { now: BENCH_NOW, clockOffsetMs, spotChecks: 0 }).map((s, index) => ({
      ...s,
      gpuExporters: { ipBase: exporterIpBase(index), gpusPerNode: settings.gpusPerNode },
    }));
    sims = await startKubeSims(simSettings, { niceness: settings.simNiceness });
    const simsSeconds = (performance.now() - started) / 1000;
    const counts = fleetCounts(sims);
    log(`  fleet: ${sims.length} clusters, ${n(counts.nodes)} nodes, ${n(counts.jobs)} jobs, ${n(counts.pods)} pods, ${n(counts.expectedWorkloads)} workloads expected; started in ${simsSeconds.toFixed(1)} s`);

    started = performance.now();
    fleet = await startFullScaleFleet({ clusters: sims.map((sim, index) => ({ ipBase: exporterIpBase(index), nodes: sim.exporterNodes ?? [] })) }, { workDir });
    log(`  exporters: ${n(fleet.exporters)} listening on port ${fleet.port} (pid ${fleet.pid}), ${n(fleet.gpus)} GPUs, ${n(fleet.attributedGpus)} of them held by a running pod; started in ${(fleet.startupMs / 1000).toFixed(1)} s`);

    const expectedRows = dataset.info.rows + counts.expectedWorkloads;
    const clusterEnv = writeFleetKubeconfigs(workDir, sims);
    const meters = {
      service: () => service?.cpuSeconds() ?? null,
      bench: benchCpuSeconds,
      fleet: () => fleet?.cpuSeconds() ?? null,
      ...Object.fromEntries(sims.map((sim) => [`sim ${sim.clusterName}`, () => sim.cpuSeconds()])),
    };
    const cpuAtSpawn = { ...readCpu(meters), service: 0 };
    service = await startServiceProcess({
      dbPath,
      workDir,
      organizationId: ORGANIZATION,
      leadInitiatives: [],
      clockAt: BENCH_NOW,
      waitFor: 'admin',
      startTimeoutMs: 120_000,
      heapProbe: true,
      env: {
        ...clusterEnv,
        GPUCAP_EXPORTER_PORT: String(fleet.port),
        GPUCAP_SCRAPE_INTERVAL_SECONDS: String(settings.scrapeIntervalSeconds),
      },
    });
    const listeningSeconds = service.startupMs / 1000;
    const running = service;
    anonymousPeak = new AnonymousPeak(() => running.memory());
    log(`  service pid ${service.pid} listening after ${listeningSeconds.toFixed(1)} s; waiting for /readyz and ${n(expectedRows)} rows`);
    const sync = await waitForSync(service, expectedRows, settings.syncTimeoutSeconds);
    const cpuAtSync = cpuBetween(cpuAtSpawn, readCpu(meters));
    const gaugesAtSync = gaugesOf(await scrape(service.adminUrl));
    log(`  synced: /readyz 200 after ${sync.readySeconds.toFixed(1)} s (RSS ${mem(sync.memoryAtReady?.rssBytes)}), ${n(sync.rows)} rows after ${sync.indexedSeconds.toFixed(1)} s ` +
      `(RSS ${mem(sync.memoryAtIndexed?.rssBytes)}, peak ${mem(sync.memoryAtIndexed?.peakRssBytes)}, heap used ${mem(gaugesAtSync.heapUsedBytes)})`);

    const readyAt = service.spawnedAt + sync.readySeconds * 1000;
    const ticks = await countTicks(service, { exporters: fleet.exporters, count: settings.ticks, intervalSeconds: settings.scrapeIntervalSeconds, readyAt });
    const gaugesAfterTicks = gaugesOf(await scrape(service.adminUrl));
    const cpuSeconds = cpuBetween(cpuAtSpawn, readCpu(meters));
    for (const [i, tick] of ticks.ticks.entries()) {
      log(`  tick ${i + 1}: ${n(tick.samples)} samples, RSS ${mem(tick.memory?.rssBytes)} (anon ${mem(tick.memory?.rssAnonBytes)}, file ${mem(tick.memory?.rssFileBytes)}), ${tick.secondsSinceReady.toFixed(0)} s after ready`);
    }
    const memory = ticks.memoryAfterTicks;
    anonymousPeak.sample();
    anonymousPeak.stop();
    const peakAnon = anonymousPeak.peakBytes;
    const ringSlab = readSlabResidency(service.pid, gaugesAfterTicks.ringReservedBytes);
    // Read before the forced collections below, which would move RSS.
    const heapAfterGc = await service.heapAfterGc();
    const output = service.outputTail();
    await service.stop();
    service = undefined;

    const peak = memory?.peakRssBytes ?? null;
    // The ticks so far wrote only part of each GPU's rings; a day of history writes all of them. What
    // is left of the slab is added to the measured RSS, not measured: it says how near the target that leaves.
    const ringPagesUnwritten = ringSlab === null ? null : ringSlab.mappingBytes - ringSlab.residentBytes;
    const withFullRings = memory === null || ringPagesUnwritten === null ? null : memory.rssBytes + ringPagesUnwritten;
    const target = {
      rssBytes: TARGET_RSS_BYTES,
      peakRssBytes: peak,
      rssAfterTicksBytes: memory?.rssBytes ?? null,
      met: peak === null ? null : peak <= TARGET_RSS_BYTES,
      /** The same without the file-backed pages (the memory-mapped index), which the kernel can drop. */
      peakRssAnonBytes: peakAnon,
      anonMet: peakAnon === null ? null : peakAnon <= TARGET_RSS_BYTES,
      rssAfterTicksPlusUnwrittenRingBytes: withFullRings,
      metWithFullRings: withFullRings === null ? null : withFullRings <= TARGET_RSS_BYTES,
    };
    const telemetryProblems = [
      ...(ticks.failures > 0 ? [`${ticks.failures} scrapes failed during the counted ticks`] : []),
      ...(gaugesAfterTicks.attributedGpus < fleet.attributedGpus ? [`the service attributes ${gaugesAfterTicks.attributedGpus} GPUs, the exporters name a pod for ${fleet.attributedGpus}`] : []),
    ];
    const results = {
      bench: NAME,
      ...environment,
      parameters: {
        quick: options.quick,
        ...settings,
        organization: ORGANIZATION,
        dataset: { ...dataset.info, cached: dataset.cached },
        clockAt: new Date(BENCH_NOW).toISOString(),
        exporters: 'one dcgm-exporter pod per simulated node (namespace gpu-operator, label app=nvidia-dcgm-exporter), discovered by the service through its pod informers; every exporter reports gpusPerNode GPUs, whatever the node type, each held by a pod the cluster runs on that node (in the order generated, each taking its GPU request) or by none when the node runs too few',
        memoryFrom: '/proc/<service pid>/status: VmRSS, RssAnon, RssFile, VmHWM (peak); heap from the service\'s own gpucap_nodejs_* gauges, then process.memoryUsage() after two forced full collections (bench/lib/service/heap-probe.ts)',
      },
      fleet: { ...counts, clusters: sims.map((s) => ({ id: s.clusterName, pid: s.pid, pods: s.counts.pods, jobs: s.counts.jobs, nodes: s.counts.nodes })), startSeconds: round(simsSeconds) },
      exporters: { count: fleet.exporters, gpus: fleet.gpus, attributedGpus: fleet.attributedGpus, startupSeconds: round(fleet.startupMs / 1000), fleetRssBytes: fleet.rssBytes() },
      sync: { listeningSeconds: round(listeningSeconds), ...sync, gauges: gaugesAtSync, cpuSeconds: cpuAtSync },
      ticks: { ...ticks, gauges: gaugesAfterTicks },
      memory: { afterTicks: memory, heapAfterGc, ringSlab },
      cpuSeconds,
      target,
      totalSeconds: round((performance.now() - began) / 1000),
      problems: telemetryProblems,
      serviceOutputTail: output,
    };
    const suffix = options.overrides !== undefined ? '.custom' : options.quick ? '.quick' : '';
    const resultsFile = writeResults(`${NAME}${suffix}`, results);
    const verdict = target.met === null ? 'n/a' : target.met ? 'met' : 'MISSED';
    const anonVerdict = target.anonMet === null ? 'n/a' : target.anonMet ? 'met' : 'MISSED';
    log(`${NAME}: peak RSS ${mem(peak)} (target ≤ ${formatBytes(TARGET_RSS_BYTES)}: ${verdict}), peak anonymous RSS ${mem(peakAnon)} (${anonVerdict}), RSS after ${ticks.ticks.length} ticks ${mem(memory?.rssBytes)}, ` +
      `${mem(withFullRings)} with the rings' unwritten pages added, ready after ${sync.readySeconds.toFixed(1)} s; ` +
      `${results.totalSeconds} s in all → ${resultsFile}`);
    return {
      name: NAME,
      resultsFile,
      requestErrors: ticks.failures,
      table: {
        header: ['figure', 'value', 'target'],
        rows: [
          ['held at once', `${n(dataset.info.rows)} rows pre-filled + ${n(counts.pods)} pods / ${n(counts.jobs)} jobs synced (${sims.length} clusters), ${n(gaugesAfterTicks.telemetryGpus)} GPUs`, ''],
          ['time to /readyz 200', `${sync.readySeconds.toFixed(1)} s`, ''],
          ['RSS at ready', mem(sync.memoryAtReady?.rssBytes), ''],
          ['RSS every row indexed', `${mem(sync.memoryAtIndexed?.rssBytes)} (${n(sync.rows)} rows, ${sync.indexedSeconds.toFixed(1)} s)`, ''],
          [`RSS after ${ticks.ticks.length} ticks`, `${mem(memory?.rssBytes)} (anon ${mem(memory?.rssAnonBytes)}, file ${mem(memory?.rssFileBytes)})`, withinTarget(memory?.rssBytes)],
          ['peak RSS (VmHWM)', mem(peak), withinTarget(peak ?? undefined)],
          ['peak anonymous RSS (sampled every 100 ms)', mem(peakAnon), withinTarget(peakAnon)],
          ['… plus ring pages not yet written', withFullRings === null ? 'n/a' : `${mem(withFullRings)} (added, not measured)`, withinTarget(withFullRings)],
          ['heap used (gauge) / after full GC', `${mem(gaugesAfterTicks.heapUsedBytes)} / ${mem(heapAfterGc?.heapUsed)}`, ''],
          ['ring bytes / reserved', `${mem(gaugesAfterTicks.ringBytes)} / ${mem(gaugesAfterTicks.ringReservedBytes)}`, ''],
          ['ring slab resident (smaps)', ringSlab === null ? 'n/a (slab mapping not found)' : `${mem(ringSlab.residentBytes)} of ${mem(ringSlab.mappingBytes)}`, ''],
          ['GPUs attributed / workloads with telemetry', `${n(gaugesAfterTicks.attributedGpus)} / ${n(gaugesAfterTicks.telemetryWorkloads)}`, ''],
          ['samples per tick', ticks.ticks.map((t) => n(t.samples)).join(', '), ''],
          ['scrape failures (must be 0)', n(ticks.failures), ''],
        ],
      },
      notes: [
        `service CPU ${cpuSeconds['service'] ?? 'n/a'} s from spawn to the last tick; CPU s: ${Object.entries(cpuSeconds).map(([name, s]) => `${name} ${s ?? 'n/a'}`).join(', ')}`,
        `exporter fleet RSS ${mem(fleet.rssBytes() ?? undefined)}; ${results.totalSeconds} s in all (dataset ${dataset.cached ? 'cached' : 'generated'})`,
        ...telemetryProblems.map((p) => `!!! ${p}`),
      ],
    };
  } catch (error) {
    if (service !== undefined) throw new Error(`${(error as Error).message}\n--- service output ---\n${service.outputTail()}`, { cause: error });
    throw error;
  } finally {
    anonymousPeak?.stop();
    await service?.stop().catch(() => undefined);
    await fleet?.stop();
    await Promise.all(sims.map((sim) => sim.stop()));
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Null off Linux or when the slab's mapping cannot be told apart (see full-scale-rings.ts). */
function readSlabResidency(pid: number, reservedBytes: number): SlabResidency | null {
  try {
    return slabResidency(readFileSync(`/proc/${pid}/smaps`, 'utf8'), reservedBytes);
  } catch {
    return null;
  }
}

function mem(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? 'n/a' : formatBytes(bytes);
}

function withinTarget(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return 'n/a';
  return `≤ ${formatBytes(TARGET_RSS_BYTES)} ${bytes <= TARGET_RSS_BYTES ? '(met)' : '(MISSED)'}`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/full-scale.ts [--quick]`
  runFullScaleBench({ quick: process.argv.includes('--quick') }).then(
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
