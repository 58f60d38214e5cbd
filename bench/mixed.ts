// Benchmark "mixed" of issue 7: every /v1 endpoint answered while the service ingests 5,000 watch
// events/s (--quick: 1,000). The real service (child process) runs on a copy of the 1M-row index
// (--quick: 10k) and watches three simulated clusters:
//   - the demo world's two clusters (sim/demo/world.ts, in this process): GPU nodes with simulated
//     dcgm-exporters that the service scrapes, Jobs running on real GPU slots, and the capacity
//     ConfigMaps, so that the metrics, ranking and capacity endpoints answer from live telemetry and
//     real budgets;
//   - a churn cluster (bench/data/generate-cluster.ts) in a child process of its own that also drives
//     its pods through create → start → finish → delete at the target rate (bench/lib/kube-sim/kube-sim.ts), so
//     that making and writing the events does not share this process's event loop with the clients.
// Load: closed-loop clients on keep-alive connections cycle through a mix of every endpoint (list with
// filters and as a TEAM_LEAD, get, stats with each group_by, per-workload metrics, both rankings, capacity,
// health). Per endpoint: p50/p99/max and errors. Target: p99 ≤ 1 s everywhere and no errors. Prints figures
// and writes bench/results/mixed[.quick].json. It never asserts speed.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { CAPACITY_NAMESPACE, startDemoWorld, type DemoWorld } from '../sim/demo/world.js';
import { mulberry32 } from '../sim/random.js';
import { CLUSTER_SEED } from './data/generate-cluster.js';
import { BENCH_NOW, CACHE_DIR, ensureWorkloadsDb } from './data/generate-workloads.js';
import { benchCpuSeconds, cpuBetween, readCpu, saturatedOf } from './lib/measure/cpu-meters.js';
import { describeEnvironment, formatBytes, writeResults } from './lib/report/environment.js';
import { driverFigures, startKubeSim, type KubeSim } from './lib/kube-sim/kube-sim.js';
import { summarize, type LatencySummary } from './lib/measure/load.js';
import { scrape, sumOf } from './lib/service/metrics-text.js';
import { startServiceProcess, type ServiceProcess } from './lib/service/service-process.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { fixed, isEntryPoint } from './lib/report/format.js';

export const NAME = 'mixed';
const ORGANIZATION = 'acme';
const CHURN_CLUSTER_ID = 'gpu-churn';
/** The churn cluster's process yields to the service and to this process's clients (see kube-sim.ts). */
const SIM_NICENESS = 10;
/** Issue 7: p99 ≤ 1 s for every endpoint while ingest runs at 5,000 events/s, and no errors. */
const TARGET_P99_MS = 1_000;

interface Settings {
  rows: number;
  eventsPerSecond: number;
  churnPods: number;
  clients: number;
  seconds: number;
}

const FULL: Settings = { rows: 1_000_000, eventsPerSecond: 5_000, churnPods: 20_000, clients: 4, seconds: 20 };
const QUICK: Settings = { rows: 10_000, eventsPerSecond: 1_000, churnPods: 2_000, clients: 2, seconds: 6 };

interface Request {
  endpoint: string;
  path: string;
  caller: 'admin' | 'lead';
}

interface EndpointResult extends LatencySummary {
  endpoint: string;
  errors: number;
  firstError: string | null;
  met: boolean;
}

export async function runMixedBench(options: { quick: boolean; log?: (line: string) => void }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  log(`${NAME}: every endpoint at ${settings.rows.toLocaleString('en-US')} rows while ${settings.eventsPerSecond.toLocaleString('en-US')} events/s are ingested, ` +
    `${settings.clients} clients × ${settings.seconds} s${options.quick ? ' (quick)' : ''}`);
  const dataset = await ensureWorkloadsDb(settings.rows, { log });
  const workDir = join(CACHE_DIR, `${NAME}-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const dbPath = join(workDir, 'index.db');
  copyFileSync(dataset.path, dbPath);
  const ids = sampleIds(dbPath, 200);

  // Every clock of the run stands at BENCH_NOW at the start, the instant the generated index is relative to.
  const offset = BENCH_NOW - Date.now();
  const now = () => Date.now() + offset;
  let world: DemoWorld | undefined;
  let churnSim: KubeSim | undefined;
  let service: ServiceProcess | undefined;
  try {
    world = await startDemoWorld({ dir: workDir, now: now() });
    churnSim = await startKubeSim(
      {
        clusterName: CHURN_CLUSTER_ID,
        shape: { pods: settings.churnPods, jobs: Math.round(settings.churnPods / 10), namespaces: 10, nodes: Math.max(16, Math.round(settings.churnPods / 80)) },
        seed: 7,
        now: Math.floor(now() / 60_000) * 60_000,
        clockOffsetMs: offset,
        churnSeed: CLUSTER_SEED,
        historyLimit: 100_000,
        bookmarkIntervalMs: 5_000,
        organization: ORGANIZATION,
        spotChecksPerKind: 0,
      },
      { niceness: SIM_NICENESS },
    );
    writeFileSync(join(world.remoteDir, `${CHURN_CLUSTER_ID}.kubeconfig`), churnSim.kubeconfig);

    service = await startServiceProcess({
      dbPath,
      workDir,
      organizationId: ORGANIZATION,
      leadInitiatives: ['llm', 'vision', 'llm-pretrain', 'vision-research'],
      clockAt: BENCH_NOW,
      waitFor: 'admin',
      startTimeoutMs: 120_000,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: world.home.kubeconfigPath,
        GPUCAP_CLUSTER_ID: world.home.name,
        GPUCAP_REMOTE_KUBECONFIG_DIR: world.remoteDir,
        GPUCAP_NAMESPACE: CAPACITY_NAMESPACE,
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_EXPORTER_PORT: String(world.exporterPort),
        GPUCAP_SCRAPE_INTERVAL_SECONDS: '5',
      },
    });
    await waitUntil(service, settings);
    const requests = await requestMix(service, ids);
    log(`  service pid ${service.pid} ready; ${requests.length} kinds of request; churning ${settings.eventsPerSecond} events/s on ${settings.churnPods.toLocaleString('en-US')} pods`);

    const eventsBefore = await churnEvents(service);
    const driverSim = churnSim;
    const meters = { service: () => (service as ServiceProcess).cpuSeconds(), bench: benchCpuSeconds, [`sim ${CHURN_CLUSTER_ID}`]: () => driverSim.cpuSeconds() };
    const cpuBefore = readCpu(meters);
    const stop = { at: performance.now() + settings.seconds * 1000 };
    const driving = churnSim.churn({ rate: settings.eventsPerSecond, seconds: settings.seconds, sampleEveryMs: 0 });
    const samples = new Map<string, number[]>(requests.map((r) => [r.endpoint, []]));
    const errors = new Map<string, string[]>();
    await Promise.all(Array.from({ length: settings.clients }, (_, client) => runClient(service as ServiceProcess, requests, client, stop.at, samples, errors)));
    const report = await driving;
    const windowSeconds = settings.seconds;
    const absorbed = ((await churnEvents(service)) - eventsBefore) / windowSeconds;
    const cpuSeconds = cpuBetween(cpuBefore, readCpu(meters));
    const memory = service.memory();

    const endpoints: EndpointResult[] = [...samples].map(([endpoint, ms]) => {
      const summary = summarize(ms);
      const failed = errors.get(endpoint) ?? [];
      return { endpoint, ...summary, errors: failed.length, firstError: failed[0] ?? null, met: failed.length === 0 && summary.requests > 0 && summary.p99 <= TARGET_P99_MS };
    });
    const requestErrors = endpoints.reduce((sum, e) => sum + e.errors, 0);
    const serviceCpu = cpuSeconds['service'];
    const ingest = {
      offeredPerSecond: Math.round(report.emitted / windowSeconds),
      absorbedPerSecond: Math.round(absorbed),
      serviceCpuPercent: serviceCpu == null ? null : Math.round((serviceCpu / windowSeconds) * 100),
      drivers: [driverFigures(churnSim, settings.eventsPerSecond, report)],
      // CPU seconds of the service, this process (the clients, the demo world) and the churn cluster's process.
      cpuSeconds,
      saturated: saturatedOf(cpuSeconds, windowSeconds),
    };
    const worstP99 = Math.max(...endpoints.map((e) => e.p99));
    const results = {
      bench: NAME,
      ...environment,
      parameters: { quick: options.quick, ...settings, simNiceness: SIM_NICENESS, organization: ORGANIZATION, dataset: { ...dataset.info, cached: dataset.cached }, clockAt: new Date(BENCH_NOW).toISOString() },
      ingest,
      endpoints,
      targets: { p99Ms: { target: TARGET_P99_MS, worst: worstP99, met: endpoints.every((e) => e.met) }, errors: requestErrors },
      memory,
      serviceOutputTail: service.outputTail(),
    };
    const resultsFile = writeResults(options.quick ? `${NAME}.quick` : NAME, results);
    log(`${NAME}: ingest offered ${ingest.offeredPerSecond} events/s, absorbed ${ingest.absorbedPerSecond}; worst p99 ${fixed(worstP99)} ms; ${requestErrors} errors → ${resultsFile}`);
    return {
      name: NAME,
      resultsFile,
      requestErrors,
      table: {
        header: ['endpoint', 'requests', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'p99 ≤ 1 s'],
        rows: endpoints.map((e) => [e.endpoint, String(e.requests), fixed(e.p50), fixed(e.p90), fixed(e.p99), fixed(e.max), String(e.errors), e.met ? 'met' : 'MISSED']),
      },
      notes: [
        `ingest during the run: offered ${ingest.offeredPerSecond} events/s, absorbed ${ingest.absorbedPerSecond} events/s, service CPU ${ingest.serviceCpuPercent ?? 'n/a'} %, ` +
          `driver CPU ${ingest.drivers[0]?.cpuPercent} %, CPU s: ${Object.entries(cpuSeconds).map(([name, cpu]) => `${name} ${cpu ?? 'n/a'}`).join(', ')}` +
          (ingest.saturated.length > 0 ? ` (saturated: ${ingest.saturated.join(', ')})` : ''),
        `service RSS ${memory ? formatBytes(memory.rssBytes) : 'n/a'} (peak ${memory ? formatBytes(memory.peakRssBytes) : 'n/a'})`,
        ...endpoints.filter((e) => e.firstError !== null).map((e) => `${e.endpoint}: first error ${e.firstError}`),
      ],
    };
  } catch (error) {
    if (service !== undefined) throw new Error(`${(error as Error).message}\n--- service output ---\n${service.outputTail()}`, { cause: error });
    throw error;
  } finally {
    await service?.stop().catch(() => undefined);
    await churnSim?.stop();
    await world?.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Ready, the churn cluster's pods and Jobs listed and written, and GPUs attributed by a first scrape. */
async function waitUntil(service: ServiceProcess, settings: Settings): Promise<void> {
  const deadline = performance.now() + 180_000;
  let last = '';
  while (performance.now() < deadline) {
    const ready = await fetch(`${service.adminUrl}/readyz`).then(async (r) => (await r.arrayBuffer(), r.status === 200), () => false);
    const series = await scrape(service.adminUrl);
    const churnSynced = sumOf(series, 'gpucap_informer_synced', { cluster: CHURN_CLUSTER_ID });
    const attributed = sumOf(series, 'gpucap_telemetry_attributed_gpus');
    const pending = sumOf(series, 'gpucap_indexer_pending');
    last = `ready ${ready}, churn cluster informers synced ${churnSynced}, attributed GPUs ${attributed}, pending ${pending}`;
    if (ready && churnSynced >= 2 && attributed > 0 && pending === 0) return;
    await sleep(200);
  }
  throw new Error(`The service was not ready for the ${settings.rows}-row mixed run within 180 s (${last})`);
}

async function churnEvents(service: ServiceProcess): Promise<number> {
  return sumOf(await scrape(service.adminUrl), 'gpucap_informer_events_total', { cluster: CHURN_CLUSTER_ID, resource: 'pods' });
}

/** The request mix: each kind once per cycle; ids and a GPU workload come from the service itself. */
async function requestMix(service: ServiceProcess, ids: readonly string[]): Promise<(Request & { ids?: readonly string[] })[]> {
  const running = await fetch(`${service.url}/v1/workloads?status=running&initiative_id=llm&limit=20`, { headers: headersFor(service, 'admin') });
  const body = (await running.json()) as { data?: { workloads?: { workload_id: string; gpu_count: number }[] } };
  const gpuJob = (body.data?.workloads ?? []).sort((a, b) => b.gpu_count - a.gpu_count)[0];
  if (running.status !== 200 || gpuJob === undefined) throw new Error(`No running llm Job to ask metrics of (HTTP ${running.status}: ${JSON.stringify(body).slice(0, 300)})`);
  return [
    { endpoint: 'health', path: '/v1/health', caller: 'admin' },
    { endpoint: 'list', path: '/v1/workloads?limit=20', caller: 'admin' },
    { endpoint: 'list_filtered', path: '/v1/workloads?status=failed&initiative_id=llm-pretrain', caller: 'admin' },
    { endpoint: 'list_team_lead', path: '/v1/workloads?limit=20', caller: 'lead' },
    { endpoint: 'get', path: '/v1/workloads/{id}', caller: 'admin', ids },
    { endpoint: 'stats', path: '/v1/workloads/stats?time_range=last_30_days', caller: 'admin' },
    { endpoint: 'stats_by_submitted_by', path: '/v1/workloads/stats?time_range=last_30_days&group_by=submitted_by', caller: 'admin' },
    { endpoint: 'stats_by_initiative_id', path: '/v1/workloads/stats?time_range=last_30_days&group_by=initiative_id', caller: 'admin' },
    { endpoint: 'stats_by_instance_type', path: '/v1/workloads/stats?time_range=last_30_days&group_by=instance_type', caller: 'admin' },
    { endpoint: 'workload_metrics', path: `/v1/workloads/${gpuJob.workload_id}/metrics?time_range=last_1h`, caller: 'admin' },
    { endpoint: 'ranking_gpu_utilization', path: '/v1/workloads/metrics?sort_by=gpu_utilization', caller: 'admin' },
    { endpoint: 'ranking_gpu_hours', path: '/v1/workloads/metrics?sort_by=gpu_hours', caller: 'admin' },
    { endpoint: 'capacity', path: '/v1/capacity', caller: 'admin' },
  ];
}

function headersFor(service: ServiceProcess, caller: 'admin' | 'lead'): Record<string, string> {
  const { token, organizationId } = service.callers[caller];
  return { authorization: `Bearer ${token}`, 'x-organization-id': organizationId };
}

/** One closed-loop client: the mix in a rotated order, one request at a time, until `until`. */
async function runClient(
  service: ServiceProcess,
  requests: readonly (Request & { ids?: readonly string[] })[],
  client: number,
  until: number,
  samples: Map<string, number[]>,
  errors: Map<string, string[]>,
): Promise<void> {
  const random = mulberry32(0xbe4c + client);
  for (let i = client; performance.now() < until; i += 1) {
    const request = requests[i % requests.length] as Request & { ids?: readonly string[] };
    const path = request.ids === undefined ? request.path : request.path.replace('{id}', request.ids[Math.floor(random() * request.ids.length)] ?? '');
    const started = performance.now();
    try {
      const response = await fetch(`${service.url}${path}`, { headers: headersFor(service, request.caller) });
      const text = await response.text();
      if (response.status !== 200) (errors.get(request.endpoint) ?? errors.set(request.endpoint, []).get(request.endpoint))?.push(`HTTP ${response.status}: ${text.slice(0, 200)}`);
      else samples.get(request.endpoint)?.push(performance.now() - started);
    } catch (error) {
      (errors.get(request.endpoint) ?? errors.set(request.endpoint, []).get(request.endpoint))?.push((error as Error).message);
    }
  }
}

/** Ids of the organization's rows spread over the table, for GET /v1/workloads/{id}. */
function sampleIds(dbPath: string, count: number): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const statement = db.prepare('SELECT workload_id FROM workloads WHERE organization_id = ? AND rowid % ? = 0 LIMIT ?').pluck();
    const total = (db.prepare('SELECT MAX(rowid) FROM workloads').pluck().get() as number | null) ?? 1;
    return statement.all(ORGANIZATION, Math.max(1, Math.floor(total / (count * 2))), count) as string[];
  } finally {
    db.close();
  }
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  runMixedBench({ quick: process.argv.includes('--quick') }).then(
    (outcome) => process.exit(outcome.requestErrors > 0 ? 1 : 0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
