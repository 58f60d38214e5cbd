// One step of the sync-ingest benchmark's event stream: pod churn at a target rate for a fixed window,
// split over as many simulated clusters (each its own process) as one driver's rate allows, then the
// wait until the service has taken in and written every event. Per step: what each driver offered, what
// the service absorbed, the lag from a change to GET /v1/workloads/{id} showing it (the probe runs
// here, fed the drivers' samples as they make them), and the CPU of every process over the window and
// the catch-up.
import { loadavg } from 'node:os';
import { benchCpuSeconds, cpuBetween, readCpu, saturatedOf, type CpuMeter, type CpuReading } from '../measure/cpu-meters.js';
import { round } from '../report/format.js';
import { driverFigures, type DriverFigures, type KubeSim } from './kube-sim.js';
import type { ChurnReport } from './kube-sim-protocol.js';
import { LagProbe, type LagOutcome } from '../service/lag-probe.js';
import { summarize, type LatencySummary } from '../measure/load.js';
import { scrape, sumOf } from '../service/metrics-text.js';
import type { ProcessMemory, ServiceProcess } from '../service/service-process.js';

export interface StepSettings {
  stepSeconds: number;
  /** One lag sample per this many ms of stream, over all drivers together. */
  sampleEveryMs: number;
  catchUpTimeoutSeconds: number;
  /** The most one driver is asked to offer: a higher target churns on more clusters at once. */
  maxRatePerDriver: number;
}

export interface StepResult {
  targetRate: number;
  /** Events the drivers made per second of the step, summed (below target when they could not keep up). */
  offeredRate: number;
  emitted: number;
  byKind: Record<string, number>;
  windowSeconds: number;
  /** Pod watch events the service took in during the step's window, per second. */
  absorbedRate: number;
  /** After the window: time until the service had taken in every event of the step and written the index. */
  catchUpSeconds: number;
  caughtUp: boolean;
  /** emitted / (window + catch-up). */
  sustainedRate: number;
  lag: LatencySummary & { unresolved: number; byKind: Record<string, LatencySummary> };
  probe: Omit<LagOutcome, 'lags' | 'requestMs'> & { requestMs: LatencySummary };
  /** CPU of the service and of this process (the probe and the scrapes) during the window, in % of one core. */
  serviceCpuPercent: number | null;
  benchCpuPercent: number;
  /** The service's CPU during the catch-up. */
  catchUpServiceCpuPercent: number | null;
  /** Most bytes one simulated API had written to its watches and the service had not read yet. */
  maxWatchBufferedBytes: number;
  memory: ProcessMemory | null;
  /** 1-minute load average at the end of the step: above about 2, something besides the benchmark ran. */
  loadAverage: number;
  /** Each cluster that churned, in cluster order. */
  drivers: DriverFigures[];
  /** CPU seconds of every process (service, bench, sim <cluster>) over the window and over the catch-up. */
  cpuSeconds: { window: CpuReading; catchUp: CpuReading };
  /** Processes that held at least 90 % of a core during the window: where a miss saturated. */
  saturated: string[];
}

/** The first clusters, as many as the rate needs at `maxRatePerDriver` each (at least one). */
export function driversFor(rate: number, sims: readonly KubeSim[], maxRatePerDriver: number): KubeSim[] {
  return sims.slice(0, Math.min(sims.length, Math.max(1, Math.ceil(rate / maxRatePerDriver))));
}

export function cpuMetersOf(service: ServiceProcess, sims: readonly KubeSim[]): Record<string, CpuMeter> {
  return { service: () => service.cpuSeconds(), bench: benchCpuSeconds, ...Object.fromEntries(sims.map((sim) => [`sim ${sim.clusterName}`, () => sim.cpuSeconds()])) };
}

export function adminHeaders(service: ServiceProcess): Record<string, string> {
  return { authorization: `Bearer ${service.callers.admin.token}`, 'x-organization-id': service.callers.admin.organizationId };
}

async function podEvents(service: ServiceProcess, clusterIds: readonly string[]): Promise<{ events: number; pending: number }> {
  const series = await scrape(service.adminUrl);
  let events = 0;
  let pending = 0;
  for (const cluster of clusterIds) {
    events += sumOf(series, 'gpucap_informer_events_total', { cluster, resource: 'pods' });
    pending += sumOf(series, 'gpucap_indexer_pending', { cluster });
  }
  return { events, pending };
}

async function maxBuffered(sims: readonly KubeSim[]): Promise<number> {
  const statuses = await Promise.all(sims.map((sim) => sim.status()));
  return Math.max(0, ...statuses.map((s) => s.maxWatchBufferedBytes));
}

export async function runIngestStep(service: ServiceProcess, sims: readonly KubeSim[], rate: number, settings: StepSettings): Promise<StepResult> {
  const drivers = driversFor(rate, sims, settings.maxRatePerDriver);
  const clusterIds = drivers.map((d) => d.clusterName);
  const meters = cpuMetersOf(service, sims);
  const before = await podEvents(service, clusterIds);
  await maxBuffered(drivers);
  const cpuAtStart = readCpu(meters);
  const probe = new LagProbe({ url: service.url, headers: adminHeaders(service) });
  probe.start();
  const started = performance.now();
  const reports: ChurnReport[] = await Promise.all(
    drivers.map((driver) =>
      driver.churn({ rate: rate / drivers.length, seconds: settings.stepSeconds, sampleEveryMs: settings.sampleEveryMs * drivers.length }, (sample) =>
        // The sample's time is epoch ms; the probe counts in this process's performance.now().
        probe.add({ id: sample.uid, kind: sample.kind, visibleAs: sample.visibleAs, emittedAt: sample.at - performance.timeOrigin }),
      ),
    ),
  );
  const windowEnd = performance.now();
  const windowSeconds = (windowEnd - started) / 1000;
  const cpuAtWindowEnd = readCpu(meters);
  const emitted = reports.reduce((sum, r) => sum + r.emitted, 0);
  const after = await podEvents(service, clusterIds);
  const absorbedRate = (after.events - before.events) / windowSeconds;

  let caughtUp = false;
  let catchUpBuffered = 0;
  const catchUpDeadline = windowEnd + settings.catchUpTimeoutSeconds * 1000;
  let catchUpEnd = windowEnd;
  while (performance.now() < catchUpDeadline) {
    const now = await podEvents(service, clusterIds);
    catchUpBuffered = Math.max(catchUpBuffered, await maxBuffered(drivers));
    catchUpEnd = performance.now();
    if (now.events - before.events >= emitted && now.pending === 0) {
      caughtUp = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const cpuAfterCatchUp = readCpu(meters);
  const outcome = await probe.finish(30_000);
  const catchUpSeconds = (catchUpEnd - windowEnd) / 1000;
  const windowCpu = cpuBetween(cpuAtStart, cpuAtWindowEnd);
  const catchUpCpu = cpuBetween(cpuAtWindowEnd, cpuAfterCatchUp);
  const percent = (seconds: number | null | undefined, over: number) => (seconds == null || over <= 0 ? null : Math.round((seconds / over) * 100));
  const { lags, requestMs, ...probeCounts } = outcome;
  const lagByKind: Record<string, LatencySummary> = {};
  for (const kind of new Set(lags.map((l) => l.kind))) lagByKind[kind] = summarize(lags.filter((l) => l.kind === kind).map((l) => l.ms));
  const byKind: Record<string, number> = {};
  for (const report of reports) for (const [kind, count] of Object.entries(report.byKind)) byKind[kind] = (byKind[kind] ?? 0) + count;
  return {
    targetRate: rate,
    offeredRate: reports.reduce((sum, r) => sum + r.offeredRate, 0),
    emitted,
    byKind,
    windowSeconds: round(windowSeconds),
    absorbedRate: Math.round(absorbedRate),
    catchUpSeconds: round(catchUpSeconds),
    caughtUp,
    sustainedRate: Math.round(emitted / (windowSeconds + catchUpSeconds)),
    lag: { ...summarize(lags.map((l) => l.ms)), unresolved: outcome.unresolved, byKind: lagByKind },
    probe: { ...probeCounts, requestMs: summarize(requestMs) },
    serviceCpuPercent: percent(windowCpu['service'], windowSeconds),
    benchCpuPercent: percent(windowCpu['bench'], windowSeconds) ?? 0,
    catchUpServiceCpuPercent: percent(catchUpCpu['service'], catchUpSeconds),
    maxWatchBufferedBytes: Math.max(catchUpBuffered, ...reports.map((r) => r.maxWatchBufferedBytes)),
    memory: service.memory(),
    loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    drivers: drivers.map((driver, i) => driverFigures(driver, rate / drivers.length, reports[i] as ChurnReport)),
    cpuSeconds: { window: windowCpu, catchUp: catchUpCpu },
    saturated: saturatedOf(windowCpu, windowSeconds),
  };
}
