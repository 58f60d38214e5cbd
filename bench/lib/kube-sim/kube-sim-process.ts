// Child process entry (started by kube-sim.ts): one simulated cluster of the write-path benchmarks, and
// its churn driver. It generates the cluster from its settings (bench/data/generate-cluster.ts, so the
// same shape and seed give the same objects as in any other run), seeds a KubeStore, serves it on a
// loopback port the OS picks, and on command drives pod churn into it at a rate. Apart from the
// benchmark's process so that serialising LIST pages, writing watch events and making the changes each
// have a core's worth of event loop that the lag probe and the other clusters do not share.
// Protocol (kube-sim-protocol.ts): settings in BENCH_KUBE_SIM; it sends `ready` (or `failed`), then
// answers `churn` with a `sample` per sampled change as it is made and a `churned` report at the end,
// and `status` with its request counts and watch buffers. It exits on `stop` or when the parent goes.
import { startKubeApi, type KubeApi } from '../../../sim/kube-api/server.js';
import { KubeStore } from '../../../sim/kube-api/store.js';
import { generateCluster, type GeneratedCluster } from '../../data/generate-cluster.js';
import { clusterExporters, type ClusterExporters } from '../telemetry/full-scale-exporters.js';
import { runChurnLoop } from './churn-loop.js';
import { SETTINGS_VARIABLE, epochNow, type ChurnCommand, type ChurnReport, type ChurnSample, type FromSim, type KubeSimSettings, type SimStatus, type ToSim } from './kube-sim-protocol.js';
import { PodChurn } from './pod-churn.js';
import { spotChecksOf } from './spot-checks.js';

/** How often the watches' unread bytes are looked at: a backlog can build and drain within a second. */
const WATCH_SAMPLE_MS = 10;

function readSettings(): KubeSimSettings {
  const raw = process.env[SETTINGS_VARIABLE];
  if (raw === undefined) throw new Error(`Cannot start the simulated cluster: ${SETTINGS_VARIABLE} is not set (see kube-sim.ts)`);
  return JSON.parse(raw) as KubeSimSettings;
}

/** The most unread watch bytes since the last take(), sampled on a timer and on every churn turn. */
class WatchBacklog {
  private peak = 0;

  constructor(private readonly api: KubeApi) {}

  sample(): void {
    this.peak = Math.max(this.peak, this.api.watchStats().bufferedBytes);
  }

  take(): number {
    this.sample();
    const peak = this.peak;
    this.peak = 0;
    return peak;
  }
}

async function churnFor(command: ChurnCommand, churn: PodChurn, organizationOf: Map<string, string>, settings: KubeSimSettings, backlog: WatchBacklog, send: (message: FromSim) => void): Promise<ChurnReport> {
  backlog.take();
  const cpuBefore = process.cpuUsage();
  let nextSampleAt = 0;
  const outcome = await runChurnLoop(churn, {
    rate: command.rate,
    seconds: command.seconds,
    onTurn: () => backlog.sample(),
    onStep: (step) => {
      if (command.sampleEveryMs <= 0 || step.visibleAs.length === 0 || organizationOf.get(step.namespace) !== settings.organization) return;
      const at = epochNow();
      if (at < nextSampleAt) return;
      nextSampleAt = (nextSampleAt === 0 ? at : nextSampleAt) + command.sampleEveryMs;
      const sample: ChurnSample = { type: 'sample', uid: step.uid, kind: step.kind, visibleAs: step.visibleAs, at };
      send(sample);
    },
  });
  const cpu = process.cpuUsage(cpuBefore);
  return {
    type: 'churned',
    emitted: outcome.emitted,
    byKind: outcome.byKind,
    windowSeconds: outcome.windowSeconds,
    offeredRate: outcome.emitted / outcome.windowSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    maxWatchBufferedBytes: backlog.take(),
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
  };
}

function seededStore(cluster: GeneratedCluster, historyLimit: number, exporters: ClusterExporters | undefined): KubeStore {
  const store = new KubeStore({ historyLimit });
  store.seed('namespaces', exporters === undefined ? cluster.namespaces : [...cluster.namespaces, exporters.namespace]);
  store.seed('nodes', cluster.nodes);
  store.seed('jobs', cluster.jobs);
  store.seed('pods', cluster.pods);
  if (exporters !== undefined) store.seed('pods', exporters.pods);
  return store;
}

async function main(): Promise<void> {
  const channel = process.send?.bind(process);
  if (channel === undefined) throw new Error('Cannot run the simulated cluster: it must be started with an IPC channel (see kube-sim.ts)');
  const send = (message: FromSim) => void channel(message);
  const settings = readSettings();

  let started = performance.now();
  const cluster = generateCluster(settings.shape, { now: settings.now, seed: settings.seed });
  const exporters = settings.gpuExporters === undefined ? undefined : clusterExporters(cluster, settings.gpuExporters, settings.now);
  const generateSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const store = seededStore(cluster, settings.historyLimit, exporters);
  const seedSeconds = (performance.now() - started) / 1000;
  const api = await startKubeApi({ store, clusterName: settings.clusterName, bookmarkIntervalMs: settings.bookmarkIntervalMs });
  const churn = new PodChurn(store, cluster, { now: () => Date.now() + settings.clockOffsetMs, seed: settings.churnSeed });
  const organizationOf = new Map(cluster.namespaceInfo.map((ns) => [ns.name, ns.organizationId]));
  const backlog = new WatchBacklog(api);
  const sampler = setInterval(() => backlog.sample(), WATCH_SAMPLE_MS);

  const stop = async () => {
    clearInterval(sampler);
    await api.close();
    process.exit(0);
  };
  // One churn at a time: a second command while one runs would interleave two rates on one PodChurn.
  let churning: Promise<void> = Promise.resolve();
  process.on('message', (message: ToSim) => {
    if (message.type === 'stop') void stop();
    else if (message.type === 'churn') churning = churning.then(async () => send(await churnFor(message, churn, organizationOf, settings, backlog, send)));
    else if (message.type === 'status') send(statusOf(api, backlog));
  });
  process.on('disconnect', () => void stop());

  send({
    type: 'ready',
    url: api.url,
    kubeconfig: api.kubeconfig(),
    counts: {
      namespaces: cluster.namespaces.length,
      nodes: cluster.nodes.length,
      jobs: cluster.jobs.length,
      pods: cluster.pods.length,
      jobPods: cluster.counts.jobPods,
      expectedWorkloads: cluster.expectedWorkloads,
    },
    spotChecks: spotChecksOf(cluster, settings.organization, settings.spotChecksPerKind),
    generateSeconds,
    seedSeconds,
    ...(exporters === undefined ? {} : { exporterNodes: exporters.nodes }),
  });
}

function statusOf(api: KubeApi, backlog: WatchBacklog): SimStatus {
  return {
    type: 'status',
    listRequests: { pods: api.faults.requestCount('/api/v1/pods', { watch: false }), jobs: api.faults.requestCount('/apis/batch/v1/jobs', { watch: false }) },
    watches: api.watchStats(),
    maxWatchBufferedBytes: backlog.take(),
  };
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  if (process.send !== undefined) process.send({ type: 'failed', message } satisfies FromSim, () => process.exit(1));
  else {
    console.error(error);
    process.exit(1);
  }
});
