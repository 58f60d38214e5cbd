// The write path of the backends benchmark: the real service (child process) on a given index, watching
// one simulated cluster (this process) as its home cluster, the one cluster it writes. After the
// initial sync, standalone pods churn (bench/lib/kube-sim/pod-churn.ts) at each offered rate for a fixed
// window; per rate: events absorbed during the window (the service's gpucap_informer_events_total),
// the time to catch up (every event taken in and gpucap_indexer_pending at 0, i.e. written), the
// sustained rate (emitted ÷ (window + catch-up)) and the CPU of the service and of the database
// server. bench/sync-ingest.ts measures the same stream on SQLite with issue 7's full fleet and the
// event-to-API lag; this one is smaller, so that both backends run it in one benchmark.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { startKubeApi } from '../../../sim/kube-api/server.js';
import { KubeStore } from '../../../sim/kube-api/store.js';
import { CLUSTER_SEED, generateCluster, type ClusterShape } from '../../data/generate-cluster.js';
import { PodChurn } from './pod-churn.js';
import { scrape, sumOf } from '../service/metrics-text.js';
import { startServiceProcess, type ServiceProcess } from '../service/service-process.js';
import { round } from '../report/format.js';

const CLUSTER_ID = 'gpu-a';

export interface IngestSettings {
  shape: ClusterShape;
  rates: number[];
  stepSeconds: number;
  syncTimeoutSeconds: number;
  catchUpTimeoutSeconds: number;
}

export interface IngestStep {
  targetRate: number;
  offeredRate: number;
  emitted: number;
  windowSeconds: number;
  absorbedRate: number;
  catchUpSeconds: number;
  caughtUp: boolean;
  sustainedRate: number;
  /** % of one core over window + catch-up. */
  serviceCpuPercent: number | null;
  databaseCpuPercent: number | null;
  loadAverage: number;
}

export interface IngestResult {
  /** Spawn → /readyz 200 and nothing pending: the initial sync of the simulated cluster. */
  syncSeconds: number;
  pods: number;
  jobs: number;
  steps: IngestStep[];
}

export interface IngestTarget {
  /** Where the service keeps its index: GPUCAP_DB_PATH or GPUCAP_DB_URL (with GPUCAP_DB_PATH empty). */
  env: Record<string, string>;
  workDir: string;
  /** CPU seconds of the database server so far (PostgreSQL); null when it is the service itself (SQLite). */
  databaseCpuSeconds: () => number | null;
}

async function podEvents(service: ServiceProcess): Promise<{ events: number; pending: number }> {
  const series = await scrape(service.adminUrl);
  return {
    events: sumOf(series, 'gpucap_informer_events_total', { cluster: CLUSTER_ID, resource: 'pods' }),
    pending: sumOf(series, 'gpucap_indexer_pending', { cluster: CLUSTER_ID }),
  };
}

/** Polls until `done` holds or the deadline passes; the time it took, or null. */
async function until(done: () => Promise<boolean>, timeoutSeconds: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < timeoutSeconds * 1000) {
    if (await done()) return (performance.now() - started) / 1000;
    await sleep(100);
  }
  return null;
}

export async function measureIngest(target: IngestTarget, settings: IngestSettings, log: (line: string) => void): Promise<IngestResult> {
  // Whole minutes, as sync-ingest does: the objects' times do not depend on how long generation takes.
  const cluster = generateCluster(settings.shape, { now: Math.floor(Date.now() / 60_000) * 60_000, seed: 0 });
  const store = new KubeStore({ historyLimit: 100_000 });
  store.seed('namespaces', cluster.namespaces);
  store.seed('nodes', cluster.nodes);
  store.seed('jobs', cluster.jobs);
  store.seed('pods', cluster.pods);
  const sim = await startKubeApi({ store, bookmarkIntervalMs: 5_000, clusterName: CLUSTER_ID });
  let service: ServiceProcess | undefined;
  try {
    mkdirSync(target.workDir, { recursive: true });
    const kubeconfig = join(target.workDir, 'kubeconfig.json');
    writeFileSync(kubeconfig, sim.kubeconfig());
    service = await startServiceProcess({
      dbPath: target.env.GPUCAP_DB_PATH ?? '',
      workDir: target.workDir,
      organizationId: 'acme',
      leadInitiatives: [],
      waitFor: 'admin',
      env: { ...target.env, GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: kubeconfig, GPUCAP_CLUSTER_ID: CLUSTER_ID },
    });
    const running = service;
    const synced = await until(async () => {
      const ready = await fetch(`${running.adminUrl}/readyz`).then(async (r) => (await r.arrayBuffer(), r.status === 200), () => false);
      return ready && (await podEvents(running)).pending === 0;
    }, settings.syncTimeoutSeconds);
    if (synced === null) throw new Error(`The service did not sync ${cluster.pods.length} pods within ${settings.syncTimeoutSeconds} s\n${running.outputTail()}`);
    const syncSeconds = (performance.now() - running.spawnedAt) / 1000;
    log(`    synced ${cluster.pods.length.toLocaleString('en-US')} pods + ${cluster.jobs.length.toLocaleString('en-US')} jobs in ${syncSeconds.toFixed(1)} s`);
    const churn = new PodChurn(store, cluster, { now: () => Date.now(), seed: CLUSTER_SEED });
    const steps: IngestStep[] = [];
    for (const rate of settings.rates) {
      const step = await offer(running, churn, rate, settings, target.databaseCpuSeconds);
      steps.push(step);
      log(`    ${String(rate).padStart(6)} ev/s offered ${Math.round(step.offeredRate)}: absorbed ${step.absorbedRate} ev/s in the window, ` +
        `${step.caughtUp ? `caught up after ${step.catchUpSeconds} s` : `NOT caught up within ${settings.catchUpTimeoutSeconds} s`}, sustained ${step.sustainedRate} ev/s; ` +
        `CPU service ${step.serviceCpuPercent ?? 'n/a'} %, database ${step.databaseCpuPercent ?? 'n/a'} %, load ${step.loadAverage}`);
    }
    return { syncSeconds: round(syncSeconds), pods: cluster.pods.length, jobs: cluster.jobs.length, steps };
  } finally {
    await service?.stop();
    await sim.close();
  }
}

async function offer(service: ServiceProcess, churn: PodChurn, rate: number, settings: IngestSettings, databaseCpu: () => number | null): Promise<IngestStep> {
  const before = await podEvents(service);
  const cpuBefore = { service: service.cpuSeconds(), database: databaseCpu() };
  const windowMs = settings.stepSeconds * 1000;
  // Events go out in slices of at most 10 ms' worth, with the event loop free between them.
  const slice = Math.ceil(rate / 100);
  let emitted = 0;
  const started = performance.now();
  for (let elapsed = 0; elapsed < windowMs; elapsed = performance.now() - started) {
    const due = Math.min(slice, Math.floor((rate * elapsed) / 1000) - emitted);
    for (let n = 0; n < due; n += 1) {
      if (churn.step() === undefined) throw new Error(`The pod stream ran dry after ${emitted} events`);
      emitted += 1;
    }
    await (due > 0 ? yieldToLoop() : sleep(1));
  }
  const windowSeconds = (performance.now() - started) / 1000;
  const atWindowEnd = await podEvents(service);
  const catchUp = await until(async () => {
    const now = await podEvents(service);
    return now.events - before.events >= emitted && now.pending === 0;
  }, settings.catchUpTimeoutSeconds);
  const catchUpSeconds = catchUp ?? settings.catchUpTimeoutSeconds;
  const seconds = windowSeconds + catchUpSeconds;
  const percent = (from: number | null, to: number | null) => (from === null || to === null ? null : Math.round(((to - from) / seconds) * 100));
  return {
    targetRate: rate,
    offeredRate: Math.round(emitted / windowSeconds),
    emitted,
    windowSeconds: round(windowSeconds),
    absorbedRate: Math.round((atWindowEnd.events - before.events) / windowSeconds),
    catchUpSeconds: round(catchUpSeconds),
    caughtUp: catchUp !== null,
    sustainedRate: Math.round(emitted / seconds),
    serviceCpuPercent: percent(cpuBefore.service, service.cpuSeconds()),
    databaseCpuPercent: percent(cpuBefore.database, databaseCpu()),
    loadAverage: round(loadavg()[0] ?? 0),
  };
}
