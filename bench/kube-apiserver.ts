// Side by side with the real kube-apiserver (envtest's v1.20 build, scripts/envtest) holding the
// same cluster: what a user would LIST there against what they would ask the service, same data, one
// run. Loads a cluster of bench/data/generate-cluster.ts (100,000 pods, 10,000 Jobs, 50 namespaces,
// 1,250 nodes; --quick: 1,000 pods; --pods N), first through the API for a while (which measures the
// create rate, ~100 pods/s here), then the rest straight into etcd as the API server itself stores
// objects (bench/lib/kube-apiserver/loader.ts).
// Times the API server's LISTs first, while nothing watches it; then runs the service (child process)
// against it until its index holds every workload, times the service's equivalent reads, and stops it.
// The order keeps the service's watches short: this kube-apiserver build can panic after minutes of
// watches with bookmarks (a reflect2 bug), and the LISTs must not be timed on a broken server.
//
// Each comparison: the same question to both, timed the same way (bench/lib/kube-apiserver/timing.ts), and
// the ratio kube-apiserver / service of p50 and of p99. The initiative label sits on namespaces, so the
// LIST equivalent of "initiative X" is a LIST of X's namespace; the one initiative label on pods
// (standalone pods relabelled "<initiative>-adhoc") is compared with a cluster-wide label selector.
// Writes bench/results/kube-apiserver[.quick].json. It never asserts speed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startEnvtest, type Envtest } from '../test/support/envtest/envtest.js';
import { REFERENCE_FLEET, generateCluster, shareOf, type ClusterShape, type NamespaceInfo } from './data/generate-cluster.js';
import { CACHE_DIR } from './data/generate-workloads.js';
import { ApiServerClient } from './lib/kube-apiserver/client.js';
import { etcdUrlOf } from './lib/kube-apiserver/etcd.js';
import { ClusterLoader, type LoadedCluster, type NamespaceCounts } from './lib/kube-apiserver/loader.js';
import { kubeToken, serviceToken, single, sequence, summarizeRounds, timeRound, walk, type Endpoint, type Operation, type Round, type TimedRun, type TimingOptions } from './lib/kube-apiserver/timing.js';
import { describeEnvironment, formatBytes, REPO_DIR, writeResults } from './lib/report/environment.js';
import { scrape, sumOf } from './lib/service/metrics-text.js';
import { startServiceProcess, type ProcessMemory, type ServiceProcess } from './lib/service/service-process.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { fixed, isEntryPoint, round } from './lib/report/format.js';

export const NAME = 'kube-apiserver';
const ORGANIZATION = 'acme';
const CLUSTER_ID = 'envtest';
const INSTALL_HINT = 'export ENVTEST_BIN=$(bash scripts/envtest/install.sh)';
const INSTALL_SCRIPT = join(REPO_DIR, 'scripts', 'envtest', 'install.sh');

interface Settings {
  shape: ClusterShape;
  /** How long units are created through the API (the create-rate measurement) before etcd takes over. */
  apiSeconds: number;
  apiConcurrency: number;
  /** From the start of loading: no unit starts after this. */
  loadSeconds: number;
  /**
   * Every variant is timed in this many rounds, the variants taking turns, so that a burst of load
   * from another process spreads over them instead of landing on one; percentiles over all samples.
   */
  rounds: number;
  /** Per round. */
  timing: TimingOptions;
  /** For the LISTs that read the whole cluster, first round only: few operations, which take seconds each. */
  heavyTiming: TimingOptions;
  syncTimeoutSeconds: number;
  /** Before timing a side: until its processes use under 15 % of a core, for at most this long. */
  quietSeconds: number;
}

const FULL: Settings = {
  // One cluster of issue 7's reference fleet (150k pods over 4 clusters): the same objects as the home
  // cluster of the sync benchmark. `--pods 100000` (or 150000) holds more; the service's sync through this
  // API server and the cluster-wide LIST then take minutes, beyond the 15 minutes of a whole `npm run bench`.
  shape: shareOf(REFERENCE_FLEET.total, REFERENCE_FLEET.clusters, 0),
  apiSeconds: 15,
  apiConcurrency: 16,
  loadSeconds: 90,
  rounds: 2,
  timing: { warmupOps: 3, warmupSeconds: 1, maxOps: 100, maxSeconds: 2, minOps: 3 },
  // A LIST that reads every pod from etcd takes many seconds: one is enough, with no warm-up.
  heavyTiming: { warmupOps: 0, warmupSeconds: 0, maxOps: 20, maxSeconds: 2, minOps: 1 },
  syncTimeoutSeconds: 300,
  quietSeconds: 10,
};

const QUICK: Settings = {
  shape: { pods: 1_000, jobs: 100, namespaces: 10, nodes: 16 },
  apiSeconds: 3,
  apiConcurrency: 16,
  loadSeconds: 60,
  rounds: 2,
  timing: { warmupOps: 2, warmupSeconds: 0.5, maxOps: 25, maxSeconds: 0.5, minOps: 3 },
  heavyTiming: { warmupOps: 1, warmupSeconds: 0.5, maxOps: 20, maxSeconds: 1, minOps: 3 },
  syncTimeoutSeconds: 90,
  quietSeconds: 5,
};

/** What a user asks, in both forms; one service operation against one or more kube-apiserver forms. */
interface Comparison {
  name: string;
  question: string;
  ours: { description: string; operation: Operation; expectedTotal?: number; path: string };
  theirs: { variant: string; description: string; operation: Operation; heavy?: boolean; countPath?: string }[];
}

export interface ComparedRun {
  variant: string;
  description: string;
  run: TimedRun;
  /** Items in the answer (unpaged LISTs only; a page has its page size). */
  items?: number;
  /** kube-apiserver / service, p50 and p99. */
  ratioP50: number;
  ratioP99: number;
}

export interface ComparisonResult {
  name: string;
  question: string;
  ours: { description: string; run: TimedRun; totalCount: number | null; expectedTotal: number | null };
  theirs: ComparedRun[];
}

export interface ServiceSync {
  listeningSeconds: number;
  readySeconds: number;
  indexedSeconds: number;
  rows: number;
  memoryAtIndexed: ProcessMemory | null;
  cpuSeconds: number | null;
}

export interface KubeApiserverOptions {
  quick: boolean;
  /** Another cluster size, for an investigation (jobs a tenth of the pods); results go to kube-apiserver.custom.json. */
  pods?: number;
  log?: (line: string) => void;
}

export async function runKubeApiserverBench(options: KubeApiserverOptions): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const base = options.quick ? QUICK : FULL;
  const settings: Settings = options.pods === undefined ? base : { ...base, shape: { ...base.shape, pods: options.pods, jobs: Math.round(options.pods / 10) } };
  const environment = describeEnvironment();
  log(`${NAME}: up to ${settings.shape.pods.toLocaleString('en-US')} pods + ${settings.shape.jobs.toLocaleString('en-US')} jobs in a real kube-apiserver${options.quick ? ' (quick)' : ''}; ` +
    `${environment.machine.cores} × ${environment.machine.cpuModel}, ${formatBytes(environment.machine.memoryBytes)}, Node ${environment.node}`);
  const [load1] = environment.loadAverageAtStart;
  if (load1 !== undefined && load1 > 1) log(`!!! WARNING: load average ${load1} before the start: other processes are busy and the figures will be noisy`);
  ensureEnvtestBinaries(log);

  const runStarted = performance.now();
  let envtest: Envtest | undefined;
  let client: ApiServerClient | undefined;
  let service: ServiceProcess | undefined;
  const workDir = join(CACHE_DIR, `${NAME}-${process.pid}`);
  try {
    const started = performance.now();
    envtest = await startEnvtest();
    const envtestSeconds = (performance.now() - started) / 1000;
    log(`  envtest (etcd + kube-apiserver) up in ${envtestSeconds.toFixed(1)} s`);
    const cpu = new EnvtestCpu(envtest.dir);
    client = new ApiServerClient(envtest.adminKubeconfig, { maxSockets: settings.apiConcurrency });

    // Whole minutes, so that the objects' times are the same within a minute however long generation takes.
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    const { loaded, namespaceInfo, generateSeconds } = await load(client, envtest, settings, now, log);
    const loadSeconds = loaded.api.seconds + loaded.etcd.seconds;
    cpu.mark('load');
    const verification = await verify(client, loaded);
    log(`  the API server lists ${verification.listedPods.toLocaleString('en-US')} pods and ${verification.listedJobs.toLocaleString('en-US')} jobs; ` +
      `spot check ${verification.checked - verification.mismatches.length}/${verification.checked} as written`);
    for (const mismatch of verification.mismatches) log(`  !!! ${mismatch}`);

    const pick = pickInitiative(namespaceInfo, loaded.byNamespace);
    log(`  compared: initiative "${pick.initiative}" (namespace ${pick.namespaces.join(', ')}: ${pick.counts.pods} pods, ${pick.counts.runningPods} running; ` +
      `${pick.counts.workloads} workloads, ${pick.counts.runningWorkloads} running)`);
    const comparisons = defineComparisons(pick);

    // The API server first, while nothing watches it.
    const kube: Endpoint = { url: envtest.url, headers: client.headers, ca: client.ca };
    const items = new Map<string, number>();
    for (const comparison of comparisons) {
      for (const variant of comparison.theirs) if (variant.countPath !== undefined) items.set(`${comparison.name} / ${variant.variant}`, await countItems(client, variant.countPath));
    }
    const kubeQuietSeconds = await waitForQuiet(() => cpu.total(), settings.quietSeconds);
    const kubeRounds = new Map<string, Round[]>();
    for (let r = 0; r < settings.rounds; r += 1) {
      for (const comparison of comparisons) {
        for (const variant of comparison.theirs) {
          if (variant.heavy === true && r > 0) continue;
          const timing = variant.heavy === true ? settings.heavyTiming : { ...settings.timing, warmupOps: r === 0 ? settings.timing.warmupOps : 0 };
          const key = `${comparison.name} / ${variant.variant}`;
          kubeRounds.set(key, [...(kubeRounds.get(key) ?? []), await timeRound(kube, variant.operation, timing)]);
        }
      }
    }
    const theirs = new Map<string, ComparedRun[]>();
    for (const comparison of comparisons) {
      theirs.set(comparison.name, comparison.theirs.map((variant) => {
        const run = summarizeRounds(kubeRounds.get(`${comparison.name} / ${variant.variant}`) ?? []);
        const count = items.get(`${comparison.name} / ${variant.variant}`);
        log(`  kube-apiserver ${comparison.name} / ${variant.variant}: p50 ${fixed(run.p50)} p99 ${fixed(run.p99)} ms (n=${run.requests}, ${formatBytes(run.bytesPerOp)}${count === undefined ? '' : `, ${count} items`})`);
        return { variant: variant.variant, description: variant.description, run, items: count, ratioP50: 0, ratioP99: 0 };
      }));
    }
    cpu.mark('kubeApiserverLists');
    const kubeMemory = apiServerRss(envtest.dir);
    const loadAfterKube = loadavg().map((l) => round(l));

    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    service = await startServiceProcess({
      dbPath: join(workDir, 'index.db'),
      workDir,
      organizationId: ORGANIZATION,
      leadInitiatives: [],
      waitFor: 'admin',
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: envtest.adminKubeconfig, GPUCAP_CLUSTER_ID: CLUSTER_ID },
    });
    log(`  service pid ${service.pid} listening after ${(service.startupMs / 1000).toFixed(1)} s; waiting until it has indexed ${loaded.expectedWorkloads.toLocaleString('en-US')} workloads`);
    const sync = await waitForIndex(service, loaded.expectedWorkloads, settings.syncTimeoutSeconds);
    log(`  service ready after ${sync.readySeconds.toFixed(1)} s, every workload indexed after ${sync.indexedSeconds.toFixed(1)} s (from spawn)`);
    cpu.mark('serviceSync');

    const ours: Endpoint = { url: service.url, headers: { authorization: `Bearer ${service.callers.admin.token}`, 'x-organization-id': ORGANIZATION } };
    const totals = new Map<string, number | null>();
    for (const comparison of comparisons) totals.set(comparison.name, await ourTotalCount(ours, comparison.ours.path));
    const running = service;
    const serviceQuietSeconds = await waitForQuiet(() => (running.cpuSeconds() ?? 0) + cpu.total(), settings.quietSeconds);
    const ourRounds = new Map<string, Round[]>();
    for (let r = 0; r < settings.rounds; r += 1) {
      for (const comparison of comparisons) {
        const timing = { ...settings.timing, warmupOps: r === 0 ? settings.timing.warmupOps : 0 };
        ourRounds.set(comparison.name, [...(ourRounds.get(comparison.name) ?? []), await timeRound(ours, comparison.ours.operation, timing)]);
      }
    }
    const results: ComparisonResult[] = [];
    for (const comparison of comparisons) {
      const run = summarizeRounds(ourRounds.get(comparison.name) ?? []);
      const totalCount = totals.get(comparison.name) ?? null;
      log(`  service ${comparison.name}: p50 ${fixed(run.p50)} p99 ${fixed(run.p99)} ms (n=${run.requests}, ${formatBytes(run.bytesPerOp)}, total_count ${totalCount ?? 'n/a'})`);
      const expected = comparison.ours.expectedTotal;
      if (expected !== undefined && totalCount !== expected) {
        verification.mismatches.push(`${comparison.name}: the service counts ${totalCount} workloads, ${expected} were loaded`);
        log(`  !!! ${comparison.name}: the service counts ${totalCount} workloads, ${expected} were loaded`);
      }
      const runs = (theirs.get(comparison.name) ?? []).map((r) => ({ ...r, ratioP50: ratio(r.run.p50, run.p50), ratioP99: ratio(r.run.p99, run.p99) }));
      results.push({ name: comparison.name, question: comparison.question, ours: { description: comparison.ours.description, run, totalCount, expectedTotal: comparison.ours.expectedTotal ?? null }, theirs: runs });
    }
    cpu.mark('serviceReads');
    const serviceMemory = service.memory();
    const loadAfterService = loadavg().map((l) => round(l));
    const serviceWatchSeconds = (performance.now() - service.spawnedAt) / 1000;
    const serviceOutput = service.outputTail();
    await service.stop();
    service = undefined;
    const panics = apiServerPanics(envtest.dir);
    const totalSeconds = (performance.now() - runStarted) / 1000;

    const { byNamespace: _byNamespace, ...loadedSummary } = loaded;
    const resultsFile = writeResults(options.pods !== undefined ? `${NAME}.custom` : options.quick ? `${NAME}.quick` : NAME, {
      bench: NAME,
      ...environment,
      parameters: {
        quick: options.quick,
        ...settings,
        organization: ORGANIZATION,
        clusterId: CLUSTER_ID,
        generator: { now: new Date(now).toISOString() },
        kubeApiserver: 'v1.20 (Debian kubernetes 1.20.5+really1.20.2, envtest build), etcd 3.4 (Debian), on loopback; LISTs as the admin user (system:masters)',
        method: 'operations one after the other on one keep-alive connection per side (HTTPS to the API server, HTTP to the service); client wall time to the last body byte; bodies not parsed; ' +
          'each variant timed in `rounds` rounds taking turns with the others (cluster-wide etcd LISTs: first round only), percentiles over all samples; each side timed once its processes had gone quiet',
        ratio: 'kube-apiserver / service, of p50 and of p99',
        order: 'kube-apiserver LISTs first, with no watch open; then the service started, synced and was timed; then it stopped',
      },
      loadAverage: { afterKubeApiserverLists: loadAfterKube, afterServiceReads: loadAfterService },
      timings: {
        envtestSeconds: round(envtestSeconds),
        generateSeconds: round(generateSeconds),
        loadSeconds: round(loadSeconds),
        /** Waits before each side was timed, until its processes had gone quiet. */
        quietSeconds: { kubeApiserver: kubeQuietSeconds, service: serviceQuietSeconds },
        totalSeconds: round(totalSeconds),
      },
      cluster: loadedSummary,
      verification,
      compared: { initiative: pick.initiative, namespaces: pick.namespaces, counts: pick.counts },
      kubeApiserver: { rssBytes: kubeMemory, panicsLogged: panics, serviceWatchSeconds: round(serviceWatchSeconds) },
      /** CPU seconds etcd and the kube-apiserver used in each phase (the service's own is under service.sync). */
      envtestCpuSeconds: cpu.phases,
      service: { sync, memoryAtEnd: serviceMemory, outputTail: serviceOutput },
      /** One line per (question, kube-apiserver form), for docs/performance.md (bench/lib/report/targets.ts reads it). */
      pairs: results.flatMap((r) =>
        r.theirs.map((t) => ({
          name: `${r.name} — ${t.variant}`,
          ours: { p50: r.ours.run.p50, p99: r.ours.run.p99, requests: r.ours.run.requests },
          theirs: { p50: t.run.p50, p99: t.run.p99, requests: t.run.requests },
          ratio: { p50: t.ratioP50, p99: t.ratioP99 },
        })),
      ),
      comparisons: results,
    });
    log(`${NAME}: results written to ${resultsFile} (${totalSeconds.toFixed(0)} s in all)`);

    const requestErrors = results.reduce((sum, r) => sum + r.ours.run.non2xx + r.ours.run.errors + r.theirs.reduce((s, t) => s + t.run.non2xx + t.run.errors, 0), 0);
    const notes = [
      `cluster: ${loaded.pods.toLocaleString('en-US')} pods (${Object.entries(loaded.podsByPhase).map(([p, n]) => `${n.toLocaleString('en-US')} ${p}`).join(', ')}), ` +
        `${loaded.jobs.toLocaleString('en-US')} jobs, ${loaded.namespaces} namespaces, ${loaded.nodes.toLocaleString('en-US')} nodes → ${loaded.expectedWorkloads.toLocaleString('en-US')} workloads` +
        (loaded.skippedUnits > 0 ? ` (${loaded.skippedUnits.toLocaleString('en-US')} generated units left out by the load deadline)` : ''),
      `load: through the API ${loaded.api.pods.toLocaleString('en-US')} pods + ${loaded.api.jobs} jobs at ${loaded.api.podsPerSecond} pods/s (${loaded.api.writesPerSecond} writes/s, ${loaded.api.concurrency} concurrent), ` +
        `then ${loaded.etcd.pods.toLocaleString('en-US')} pods + ${loaded.etcd.jobs.toLocaleString('en-US')} jobs straight into etcd as protobuf in ${loaded.etcd.seconds.toFixed(1)} s ` +
        `(${loaded.etcd.podsPerSecond.toLocaleString('en-US')} pods/s incl. ${loaded.etcd.watchCacheSeconds.toFixed(1)} s for the watch cache); load ${loadSeconds.toFixed(0)} s in all`,
      `service: ready ${sync.readySeconds.toFixed(1)} s, ${sync.rows.toLocaleString('en-US')} rows indexed ${sync.indexedSeconds.toFixed(1)} s after spawn; watched the API server ${serviceWatchSeconds.toFixed(0)} s, which logged ${panics} panic(s)`,
      `timed in ${settings.rounds} rounds per variant after waiting for quiet (${kubeQuietSeconds} s before the API server's LISTs, ${serviceQuietSeconds} s before the service's reads); ${totalSeconds.toFixed(0)} s in all`,
      `compared initiative "${pick.initiative}", namespace ${pick.namespaces.join(', ')}; kube-apiserver v1.20 LISTs read etcd (resourceVersion unset), "watch cache" rows use resourceVersion=0 (as ≥ 1.31 serves consistent LISTs)`,
      ...verification.mismatches.map((m) => `spot check: ${m}`),
    ];
    return {
      name: NAME,
      resultsFile,
      requestErrors,
      table: {
        header: ['question', 'kube-apiserver LIST', 'svc p50 ms', 'svc p99 ms', 'kube p50 ms', 'kube p99 ms', 'ratio p50', 'ratio p99', 'svc KiB', 'kube KiB'],
        rows: results.flatMap((r) =>
          r.theirs.map((t) => [
            r.name, t.variant, fixed(r.ours.run.p50), fixed(r.ours.run.p99), fixed(t.run.p50), fixed(t.run.p99), `${t.ratioP50}×`, `${t.ratioP99}×`,
            (r.ours.run.bytesPerOp / 1024).toFixed(0), (t.run.bytesPerOp / 1024).toFixed(0),
          ]),
        ),
      },
      notes,
    };
  } catch (error) {
    if (service !== undefined) throw new Error(`${(error as Error).message}\n--- service output ---\n${service.outputTail()}`, { cause: error });
    throw error;
  } finally {
    await service?.stop().catch(() => undefined);
    client?.close();
    await envtest?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * ENVTEST_BIN, or scripts/envtest/install.sh's answer: cached after its first build (about 20 minutes
 * once, which `npm run bench` on a machine that never ran CI pays here).
 */
function ensureEnvtestBinaries(log: (line: string) => void): void {
  if (process.env.ENVTEST_BIN === undefined || process.env.ENVTEST_BIN === '') {
    log(`  ENVTEST_BIN is not set: asking ${INSTALL_SCRIPT} (cached after its first build, which takes about 20 minutes)`);
    process.env.ENVTEST_BIN = execFileSync('bash', [INSTALL_SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  }
  const bin = process.env.ENVTEST_BIN;
  for (const name of ['etcd', 'kube-apiserver']) {
    if (!existsSync(join(bin, name))) throw new Error(`Cannot run ${NAME}: no ${name} in "${bin}" (${INSTALL_HINT})`);
  }
}

/** Generates the cluster and loads it; only the counts survive, so the generated objects can be collected. */
async function load(client: ApiServerClient, envtest: Envtest, settings: Settings, now: number, log: (line: string) => void): Promise<{ loaded: LoadedCluster; namespaceInfo: NamespaceInfo[]; generateSeconds: number }> {
  const started = performance.now();
  // seed 0: the home cluster of bench/sync-ingest.ts at full scale.
  const cluster = generateCluster(settings.shape, { now, seed: 0 });
  const generateSeconds = (performance.now() - started) / 1000;
  log(`  generated ${cluster.pods.length.toLocaleString('en-US')} pods, ${cluster.jobs.length.toLocaleString('en-US')} jobs in ${generateSeconds.toFixed(1)} s`);
  const loader = new ClusterLoader(client, cluster, log);
  const loadStarted = performance.now();
  const api = await loader.loadThroughApi({ concurrency: settings.apiConcurrency, seconds: settings.apiSeconds });
  log(`  through the API: ${cluster.namespaces.length} namespaces + ${cluster.nodes.length} nodes in ${api.namespacesAndNodesSeconds.toFixed(1)} s, then ${api.pods.toLocaleString('en-US')} pods + ${api.jobs} jobs ` +
    `at ${api.podsPerSecond} pods/s (${api.writesPerSecond} writes/s with ${api.concurrency} in flight)`);
  const etcd = await loader.loadThroughEtcd(etcdUrlOf(envtest.dir), { maxPods: settings.shape.pods, deadline: loadStarted + settings.loadSeconds * 1000 });
  log(`  straight into etcd: ${etcd.pods.toLocaleString('en-US')} pods + ${etcd.jobs.toLocaleString('en-US')} jobs in ${etcd.seconds.toFixed(1)} s (${etcd.puts.toLocaleString('en-US')} puts, ${formatBytes(etcd.bytes)}; ` +
    `watch cache current ${etcd.watchCacheSeconds.toFixed(1)} s after the last write); dropped as v1.20 would: ${etcd.droppedFields.join(', ') || 'nothing'}`);
  return { loaded: loader.summary(), namespaceInfo: cluster.namespaceInfo, generateSeconds };
}

interface Verification {
  listedPods: number;
  listedJobs: number;
  checked: number;
  mismatches: string[];
}

/** Counts what the API server lists, and GETs a few etcd-written pods to compare with what was written. */
async function verify(client: ApiServerClient, loaded: LoadedCluster): Promise<Verification> {
  const countOf = async (path: string) => {
    const list = await client.call<{ items: unknown[]; metadata: { remainingItemCount?: number } }>('GET', `${path}?limit=1`);
    return list.items.length + (list.metadata.remainingItemCount ?? 0);
  };
  const listedPods = await countOf('/api/v1/pods');
  const listedJobs = await countOf('/apis/batch/v1/jobs');
  const mismatches: string[] = [];
  if (listedPods !== loaded.pods) mismatches.push(`the API server lists ${listedPods} pods, ${loaded.pods} were loaded`);
  if (listedJobs !== loaded.jobs) mismatches.push(`the API server lists ${listedJobs} jobs, ${loaded.jobs} were loaded`);
  for (const sample of loaded.etcd.samples) {
    const pod = await client.call<{ metadata: { uid: string }; spec: { nodeName?: string }; status: { phase: string } }>('GET', `/api/v1/namespaces/${sample.namespace}/pods/${sample.name}`);
    const got = { uid: pod.metadata.uid, phase: pod.status.phase, nodeName: pod.spec.nodeName };
    const want = { uid: sample.uid, phase: sample.phase, nodeName: sample.nodeName };
    if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push(`pod ${sample.namespace}/${sample.name}: served ${JSON.stringify(got)}, written ${JSON.stringify(want)}`);
  }
  return { listedPods, listedJobs, checked: loaded.etcd.samples.length + 2, mismatches };
}

interface Pick {
  initiative: string;
  namespaces: string[];
  counts: NamespaceCounts;
}

/**
 * The organization's initiative with the most running workloads among those that live in one namespace
 * (so that the API server's side is one LIST, not one per namespace), else among all.
 */
function pickInitiative(namespaceInfo: readonly NamespaceInfo[], byNamespace: Readonly<Record<string, NamespaceCounts>>): Pick {
  const namespacesOf = new Map<string, string[]>();
  for (const ns of namespaceInfo) if (ns.organizationId === ORGANIZATION) namespacesOf.set(ns.initiativeId, [...(namespacesOf.get(ns.initiativeId) ?? []), ns.name]);
  const candidates = [...namespacesOf].map(([initiative, namespaces]) => {
    const counts: NamespaceCounts = { pods: 0, runningPods: 0, workloads: 0, runningWorkloads: 0, relabelledPods: 0, relabelledRunningPods: 0 };
    for (const ns of namespaces) for (const [key, value] of Object.entries(byNamespace[ns] ?? {})) counts[key as keyof NamespaceCounts] += value;
    return { initiative, namespaces, counts };
  });
  const single = candidates.filter((c) => c.namespaces.length === 1);
  const best = (single.length > 0 ? single : candidates).sort((a, b) => b.counts.runningWorkloads - a.counts.runningWorkloads || a.initiative.localeCompare(b.initiative))[0];
  if (best === undefined) throw new Error(`The generated cluster has no namespace of organization "${ORGANIZATION}"`);
  return best;
}

function defineComparisons(pick: Pick): Comparison[] {
  const x = pick.initiative;
  const adhoc = `${x}-adhoc`;
  const c = pick.counts;
  const pods = (ns: string, query: string) => `/api/v1/namespaces/${ns}/pods${query === '' ? '' : `?${query}`}`;
  const running = 'fieldSelector=status.phase%3DRunning';
  const kubePages = (paths: string[]) => walk(paths, (first, token) => `${first}${first.includes('?') ? '&' : '?'}continue=${encodeURIComponent(token)}`, kubeToken);
  const ourPages = (path: string) => walk([path], (first, token) => `${first}&next_token=${encodeURIComponent(token)}`, serviceToken);
  const first = pick.namespaces[0] ?? '';
  const everyNs = (query: string) => pick.namespaces.map((ns) => pods(ns, query));
  const withQuery = (paths: string[], query: string) => paths.map((p) => `${p}${p.includes('?') ? '&' : '?'}${query}`);
  const nsNote = pick.namespaces.length === 1 ? `namespace ${first}` : `namespaces ${pick.namespaces.join(', ')}, one after the other`;
  return [
    {
      name: 'initiative+running, page',
      question: `the first 20 running workloads of initiative ${x}`,
      ours: { description: `GET /v1/workloads?initiative_id=${x}&status=running&limit=20`, path: `/v1/workloads?initiative_id=${x}&status=running&limit=20`, operation: single(`/v1/workloads?initiative_id=${x}&status=running&limit=20`), expectedTotal: c.runningWorkloads - c.relabelledRunningPods },
      theirs: [{ variant: 'ns, phase=Running, limit=20', description: `GET ${pods(first, `${running}&limit=20`)}`, operation: single(pods(first, `${running}&limit=20`)) }],
    },
    {
      name: 'initiative+running, all',
      question: `every running workload of initiative ${x}`,
      ours: { description: `GET /v1/workloads?initiative_id=${x}&status=running&limit=100, then every next_token page`, path: `/v1/workloads?initiative_id=${x}&status=running&limit=100`, operation: ourPages(`/v1/workloads?initiative_id=${x}&status=running&limit=100`), expectedTotal: c.runningWorkloads - c.relabelledRunningPods },
      theirs: [
        { variant: 'ns, phase=Running, unpaged', description: `GET ${everyNs(running).join(' + ')} (${nsNote})`, operation: sequence(everyNs(running)), countPath: pods(first, running) },
        { variant: 'ns, phase=Running, kubectl chunks of 500', description: `GET ${pods(first, `${running}&limit=500`)} and its continue pages (kubectl get's default --chunk-size)`, operation: kubePages(everyNs(`${running}&limit=500`)) },
        { variant: 'ns, phase=Running, watch cache', description: `GET ${pods(first, `${running}&resourceVersion=0`)} (served from the watch cache)`, operation: sequence(withQuery(everyNs(running), 'resourceVersion=0')) },
      ],
    },
    {
      name: 'initiative, page',
      question: `the first 20 workloads of initiative ${x}`,
      ours: { description: `GET /v1/workloads?initiative_id=${x}&limit=20`, path: `/v1/workloads?initiative_id=${x}&limit=20`, operation: single(`/v1/workloads?initiative_id=${x}&limit=20`), expectedTotal: c.workloads - c.relabelledPods },
      theirs: [{ variant: 'ns, limit=20', description: `GET ${pods(first, 'limit=20')}`, operation: single(pods(first, 'limit=20')) }],
    },
    {
      name: 'initiative, all',
      question: `every workload of initiative ${x}`,
      ours: { description: `GET /v1/workloads?initiative_id=${x}&limit=100, then every next_token page`, path: `/v1/workloads?initiative_id=${x}&limit=100`, operation: ourPages(`/v1/workloads?initiative_id=${x}&limit=100`), expectedTotal: c.workloads - c.relabelledPods },
      theirs: [
        { variant: 'ns, unpaged', description: `GET ${everyNs('').join(' + ')} (${nsNote})`, operation: sequence(everyNs('')), countPath: pods(first, '') },
        { variant: 'ns, kubectl chunks of 500', description: `GET ${pods(first, 'limit=500')} and its continue pages`, operation: kubePages(everyNs('limit=500')) },
        { variant: 'ns, watch cache', description: `GET ${pods(first, 'resourceVersion=0')} (served from the watch cache)`, operation: sequence(withQuery(everyNs(''), 'resourceVersion=0')) },
      ],
    },
    {
      name: 'pod label, all',
      question: `every workload labelled gpucap.io/initiative=${adhoc} on the pod itself`,
      ours: { description: `GET /v1/workloads?initiative_id=${adhoc}&limit=100, then every next_token page`, path: `/v1/workloads?initiative_id=${adhoc}&limit=100`, operation: ourPages(`/v1/workloads?initiative_id=${adhoc}&limit=100`), expectedTotal: c.relabelledPods },
      theirs: [
        { variant: 'cluster, labelSelector, unpaged', description: `GET /api/v1/pods?labelSelector=gpucap.io/initiative=${adhoc}`, operation: single(`/api/v1/pods?labelSelector=gpucap.io%2Finitiative%3D${adhoc}`), heavy: true },
        // Counted here: the same items, and one more read of every pod from etcd would cost a minute.
        { variant: 'cluster, labelSelector, watch cache', description: `GET /api/v1/pods?labelSelector=gpucap.io/initiative=${adhoc}&resourceVersion=0`, operation: single(`/api/v1/pods?labelSelector=gpucap.io%2Finitiative%3D${adhoc}&resourceVersion=0`), heavy: true, countPath: `/api/v1/pods?labelSelector=gpucap.io%2Finitiative%3D${adhoc}&resourceVersion=0` },
      ],
    },
    {
      name: 'first page',
      question: 'the first 20 workloads, no filter',
      ours: { description: 'GET /v1/workloads (default page: 20, the organization\'s)', path: '/v1/workloads', operation: single('/v1/workloads') },
      theirs: [{ variant: 'cluster, limit=20', description: 'GET /api/v1/pods?limit=20', operation: single('/api/v1/pods?limit=20') }],
    },
  ];
}

/** Items of one LIST, parsed once outside the timing (what the unpaged LIST answers). */
async function countItems(client: ApiServerClient, path: string): Promise<number> {
  return (await client.call<{ items: unknown[] }>('GET', path)).items.length;
}

/** metadata.total_count of the service's first page for `path`. */
async function ourTotalCount(endpoint: Endpoint, path: string): Promise<number | null> {
  const response = await fetch(`${endpoint.url}${path}`, { headers: endpoint.headers });
  const body = (await response.json()) as { metadata?: { total_count?: number } };
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.metadata?.total_count ?? null;
}

async function waitForIndex(service: ServiceProcess, expected: number, timeoutSeconds: number): Promise<ServiceSync> {
  const deadline = service.spawnedAt + timeoutSeconds * 1000;
  let readyAt: number | undefined;
  let indexedAt: number | undefined;
  let rows = 0;
  while (readyAt === undefined || indexedAt === undefined) {
    if (performance.now() > deadline) {
      const readyz = await fetch(`${service.adminUrl}/readyz`).then((r) => r.text()).catch((error: unknown) => String(error));
      throw new Error(`The service did not index the cluster within ${timeoutSeconds} s (ready: ${readyAt !== undefined}, rows ${rows} of ${expected}); /readyz: ${readyz.slice(0, 2000)}`);
    }
    if (readyAt === undefined) {
      const response = await fetch(`${service.adminUrl}/readyz`);
      await response.arrayBuffer();
      if (response.status === 200) readyAt = performance.now();
    }
    const series = await scrape(service.adminUrl);
    rows = sumOf(series, 'gpucap_index_workloads');
    if (indexedAt === undefined && rows >= expected && sumOf(series, 'gpucap_indexer_pending', { cluster: CLUSTER_ID }) === 0) indexedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    listeningSeconds: round(service.startupMs / 1000),
    readySeconds: round((readyAt - service.spawnedAt) / 1000),
    indexedSeconds: round((indexedAt - service.spawnedAt) / 1000),
    rows,
    memoryAtIndexed: service.memory(),
    cpuSeconds: service.cpuSeconds(),
  };
}

/** CPU seconds of envtest's etcd and kube-apiserver, per phase, from /proc (null off Linux). */
class EnvtestCpu {
  readonly phases: Record<string, { kubeApiserver: number | null; etcd: number | null }> = {};
  private last: { kubeApiserver: number | null; etcd: number | null };

  constructor(private readonly dir: string) {
    this.last = this.read();
  }

  /** Both processes' CPU seconds so far. */
  total(): number {
    const now = this.read();
    return (now.kubeApiserver ?? 0) + (now.etcd ?? 0);
  }

  mark(phase: string): void {
    const now = this.read();
    const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : round(a - b));
    this.phases[phase] = { kubeApiserver: delta(now.kubeApiserver, this.last.kubeApiserver), etcd: delta(now.etcd, this.last.etcd) };
    this.last = now;
  }

  private read(): { kubeApiserver: number | null; etcd: number | null } {
    const env = readFileSync(join(this.dir, 'env'), 'utf8');
    const of = (name: string): number | null => {
      try {
        const pid = new RegExp(`^${name}=(\\d+)$`, 'm').exec(env)?.[1];
        if (pid === undefined) return null;
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        return null;
      }
    };
    return { kubeApiserver: of('ENVTEST_APISERVER_PID'), etcd: of('ENVTEST_ETCD_PID') };
  }
}

/**
 * Waits until `cpuSeconds` grows by under 0.15 s per second (the Go garbage collector of an API
 * server that just took in 100k objects runs for a while), or `maxSeconds` passed; the seconds waited.
 */
async function waitForQuiet(cpuSeconds: () => number, maxSeconds: number): Promise<number> {
  const started = performance.now();
  let last = cpuSeconds();
  while (performance.now() - started < maxSeconds * 1000) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = cpuSeconds();
    if (now - last < 0.15) break;
    last = now;
  }
  return round((performance.now() - started) / 1000);
}

/** VmRSS of the kube-apiserver (bytes), from its pid in envtest's env file; null off Linux. */
function apiServerRss(envtestDir: string): number | null {
  try {
    const pid = /^ENVTEST_APISERVER_PID=(\d+)$/m.exec(readFileSync(join(envtestDir, 'env'), 'utf8'))?.[1];
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return null;
  }
}

function apiServerPanics(envtestDir: string): number {
  try {
    return readFileSync(join(envtestDir, 'apiserver.log'), 'utf8').split('Observed a panic').length - 1;
  } catch {
    return 0;
  }
}

function ratio(theirs: number, ours: number): number {
  if (ours <= 0) return 0;
  const r = theirs / ours;
  return r >= 100 ? Math.round(r) : r >= 10 ? Math.round(r * 10) / 10 : Math.round(r * 100) / 100;
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/kube-apiserver.ts [--quick] [--pods N]`
  const pods = process.argv.includes('--pods') ? Number(process.argv[process.argv.indexOf('--pods') + 1]) : undefined;
  runKubeApiserverBench({ quick: process.argv.includes('--quick'), pods }).then(
    (outcome) => {
      console.log(outcome.table.header.join(' | '));
      for (const row of outcome.table.rows) console.log(row.join(' | '));
      for (const note of outcome.notes) console.log(`  ${note}`);
      process.exit(outcome.requestErrors > 0 ? 1 : 0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
