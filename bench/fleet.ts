// Benchmark of the fleet endpoints over HTTP against the real service (issue 39, "Performance"):
// GET /v1/fleet over last_30_days with a day series, and GET /v1/fleet/nodes, at 1,250 GPU nodes × 8
// GPUs over 4 clusters (--quick: 50 nodes, 3 days). The history (31 days of node-hours, schema v14) is
// generated through the store's writer and cached (bench/lib/fleet/history.ts); the nodes now are
// served by simulated Kubernetes APIs the service watches (bench/lib/fleet/clusters.ts). The service
// runs in a child process with its clock shifted to the history's end (FLEET_NOW), so last_30_days
// covers the same hours however old the cached file is. Per scenario: warm-up, a sequential run on one
// keep-alive connection (at least 300 requests at full scale, for the p99), an 8-connection run.
// Writes bench/results/fleet[.quick].json. It never asserts speed; a failed request fails the run.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CACHE_DIR } from './data/generate-workloads.js';
import { startSimFleet, type SimFleet } from './lib/fleet/clusters.js';
import { FLEET_HISTORY_VERSION, ensureFleetHistory, type FleetHistory } from './lib/fleet/history.js';
import { FLEET_NOW, FULL_SHAPE, INITIATIVE, ORGANIZATION, QUICK_SHAPE, fleetNodes, type FleetShape } from './lib/fleet/layout.js';
import { getJson, loadRun, sequentialRun, type LoadResult, type RunResult, type Target } from './lib/measure/load.js';
import { describeEnvironment, formatBytes, writeResults, type Environment } from './lib/report/environment.js';
import { fixed, isEntryPoint } from './lib/report/format.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { startServiceProcess, type ProcessMemory, type ServiceProcess } from './lib/service/service-process.js';
import { headersOf, waitForIdle } from './workloads-api.js';

export const NAME = 'fleet';

interface Settings {
  shape: FleetShape;
  connections: number;
  warmupSeconds: number;
  loadSeconds: number;
  /** A nearest-rank p99 of 100 requests is their slowest one: at full scale each scenario runs at least 300. */
  sequential: { maxRequests: number; maxSeconds: number; minRequests: number };
  /** How long the service may take to start and to show every node. */
  syncTimeoutSeconds: number;
}

const FULL: Settings = {
  shape: FULL_SHAPE,
  connections: 8,
  warmupSeconds: 1,
  loadSeconds: 4,
  sequential: { maxRequests: 1000, maxSeconds: 5, minRequests: 300 },
  syncTimeoutSeconds: 180,
};

// The smoke check of the benchmark's own code (CI): every scenario runs, briefly. Its figures say
// nothing about the targets.
const QUICK: Settings = {
  shape: QUICK_SHAPE,
  connections: 8,
  warmupSeconds: 0.2,
  loadSeconds: 0.5,
  sequential: { maxRequests: 40, maxSeconds: 0.5, minRequests: 10 },
  syncTimeoutSeconds: 60,
};

/** Issue 39: the history with a day series, and the nodes; p99 of the sequential run. */
const TARGETS = { history: { p99: 50 }, nodes: { p99: 10 } };

/** 'history-by-node': every node a group in each day, an answer of megabytes that the target does not cover. */
type Kind = 'history' | 'history-by-node' | 'nodes';

interface Scenario {
  name: string;
  kind: Kind;
  description: string;
  path: string;
}

const HISTORY = '/v1/fleet?time_range=last_30_days&interval=day';

// The nodes first, the history by node last: its answers of 8 MiB leave a heap whose collection
// would land in the next scenario's runs (a 500 ms request of /v1/fleet/nodes when it ran before them).
const SCENARIOS: Scenario[] = [
  { name: 'nodes_limit_100', kind: 'nodes', description: 'GET /v1/fleet/nodes, first page of 100', path: '/v1/fleet/nodes?limit=100' },
  {
    name: 'nodes_limit_1000', kind: 'nodes', path: '/v1/fleet/nodes?limit=1000',
    description: 'GET /v1/fleet/nodes, first page of 1,000 (the largest page)',
  },
  {
    name: 'nodes_ready_limit_100', kind: 'nodes', path: '/v1/fleet/nodes?state=ready&limit=100',
    description: 'GET /v1/fleet/nodes?state=ready, first page of 100',
  },
  { name: 'fleet_30d_day', kind: 'history', description: 'GET /v1/fleet, last_30_days, day series', path: HISTORY },
  {
    name: 'fleet_30d_day_by_gpu_model', kind: 'history', path: `${HISTORY}&group_by=gpu_model`,
    description: '… grouped by gpu_model (3 groups, in the summary and in each day)',
  },
  {
    name: 'fleet_30d_day_by_node', kind: 'history-by-node', path: `${HISTORY}&group_by=node`,
    description: '… grouped by node (every node, in the summary and in each day)',
  },
];

/** What one answer of the scenario held, from the probe before its runs. */
interface Answer {
  status: number;
  bytes: number;
  /** /v1/fleet: entries of `grouped`, of `series`, and the groups of every series entry. */
  groups?: number;
  seriesEntries?: number;
  seriesGroups?: number;
  /** /v1/fleet/nodes: nodes on the page, and total_count. */
  nodes?: number;
  totalCount?: number;
}

interface ScenarioResult extends Scenario {
  caller: 'ORG_ADMIN';
  answer: Answer;
  sequential: RunResult;
  load: LoadResult;
}

interface TargetCheck {
  target: string;
  scenario: string;
  measured: number;
  limit: number;
  met: boolean;
}

type Now = { nodes?: number; total_gpus?: number; allocated_gpus?: number; nodes_unavailable?: number };

interface Run {
  now: Now;
  expected: SimFleet['expected'];
  /** From the service's spawn to GET /v1/fleet showing every node (and pod). */
  seenAfterMs: number;
  startupMs: number;
  memory: ProcessMemory | null;
  loadAverageAfter: number[];
  scenarios: ScenarioResult[];
}

const en = (value: number): string => value.toLocaleString('en-US');

type Log = (line: string) => void;

export async function runFleetBench(options: { quick: boolean; scenarios?: string[]; log?: Log }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  const { shape } = settings;
  const scenarios = SCENARIOS.filter((s) => options.scenarios === undefined || options.scenarios.includes(s.name));
  if (scenarios.length === 0) {
    throw new Error(`No scenario is named ${JSON.stringify(options.scenarios)} (known: ${SCENARIOS.map((s) => s.name).join(', ')})`);
  }
  log(`${NAME}: ${en(shape.nodes)} nodes × 8 GPUs over ${shape.clusters} clusters, ${shape.days} days of history` +
    `${options.quick ? ' (quick)' : ''}; ${environment.machine.cores} × ${environment.machine.cpuModel}, ` +
    `${formatBytes(environment.machine.memoryBytes)}, Node ${environment.node}; load average ${environment.loadAverageAtStart.join(', ')}`);
  const [load1] = environment.loadAverageAtStart;
  if (load1 !== undefined && load1 > 1) {
    log(`!!! WARNING: load average ${load1} before the start: other processes are busy and the figures will be noisy`);
  }

  const history = await ensureFleetHistory(shape, { log });
  log(`fleet history: ${sizesOf(history)}; generation ${history.info.generationSeconds.toFixed(1)} s${history.cached ? ' (cached)' : ''}`);
  const workDir = join(CACHE_DIR, `run-fleet-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  let run: Run;
  try {
    run = await measureAll(settings, scenarios, history, workDir, log);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }

  const targets = options.quick || run.now.nodes !== FULL_SHAPE.nodes ? [] : checkTargets(run.scenarios);
  // A part of the scenarios (an investigation) → fleet.custom.json, which git ignores.
  const suffix = options.quick ? '.quick' : options.scenarios !== undefined ? '.custom' : '';
  const resultsFile = writeResults(`${NAME}${suffix}`, resultsOf(options.quick, settings, environment, history, run, targets));
  log(`${NAME}: results written to ${resultsFile}`);
  return outcomeOf(resultsFile, settings, environment, history, run, targets);
}

function sizesOf(history: FleetHistory): string {
  const { info } = history;
  return `${en(info.fleetHoursRows)} rows in fleet_hours, ${en(info.fleetDaysRows)} in fleet_days, index ${formatBytes(info.fileBytes)}`;
}

function resultsOf(quick: boolean, settings: Settings, environment: Environment, history: FleetHistory, run: Run, targets: TargetCheck[]) {
  return {
    bench: NAME,
    ...environment,
    parameters: {
      quick,
      ...settings,
      organization: ORGANIZATION,
      caller: 'ORG_ADMIN',
      fleetNow: new Date(FLEET_NOW).toISOString(),
      historyVersion: FLEET_HISTORY_VERSION,
      latencyFrom: 'sequential run (one keep-alive connection, client-side wall time per request)',
      throughputFrom: `${settings.connections}-connection autocannon run`,
    },
    targets,
    history: { ...history.info, cached: history.cached },
    fleet: {
      clusters: settings.shape.clusters,
      nodes: run.now.nodes ?? null,
      gpus: run.now.total_gpus ?? null,
      now: run.now,
      expected: run.expected,
      seenAfterMs: run.seenAfterMs,
    },
    service: { startupMs: run.startupMs, memory: run.memory },
    loadAverageAfter: run.loadAverageAfter,
    scenarios: run.scenarios,
  };
}

function outcomeOf(
  resultsFile: string, settings: Settings, environment: Environment, history: FleetHistory, run: Run, targets: TargetCheck[],
): BenchOutcome {
  const c = settings.connections;
  const nodes = en(run.now.nodes ?? 0);
  const notes = [
    `history: ${sizesOf(history)}, generated in ${history.info.generationSeconds.toFixed(1)} s` +
      `${history.cached ? ` (cached, ${history.info.generatedAt})` : ''}`,
    `now: ${nodes} nodes, ${en(run.now.total_gpus ?? 0)} GPUs (${run.now.allocated_gpus ?? 0} allocated), seen ` +
      `${(run.seenAfterMs / 1000).toFixed(1)} s after the spawn; ` +
      `service peak RSS ${run.memory ? formatBytes(run.memory.peakRssBytes) : 'n/a'}`,
    `load average at start ${environment.loadAverageAtStart.join(', ')}, after the runs ${run.loadAverageAfter.join(', ')}`,
  ];
  for (const t of targets) {
    notes.push(`target ${t.target} (${t.scenario}): ${fixed(t.measured)} vs ${t.limit} → ${t.met ? 'met' : 'MISSED'}`);
  }
  return {
    name: NAME,
    resultsFile,
    requestErrors: run.scenarios.reduce((sum, s) => sum + errorsOf(s), 0),
    table: {
      header: ['nodes', 'scenario', 'KiB', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', `req/s c=${c}`, `p99 ms c=${c}`, 'errors'],
      rows: run.scenarios.map((s) => [
        nodes, s.name, en(Math.round(s.answer.bytes / 1024)), fixed(s.sequential.p50), fixed(s.sequential.p90), fixed(s.sequential.p99),
        fixed(s.sequential.max), en(Math.round(s.load.reqPerSec)), fixed(s.load.p99), String(errorsOf(s)),
      ]),
    },
    notes,
  };
}

/** Starts the clusters and the service on a copy of the history, waits for every node, runs the scenarios. */
async function measureAll(settings: Settings, chosen: readonly Scenario[], history: FleetHistory, workDir: string, log: Log): Promise<Run> {
  const dbPath = join(workDir, 'index.db');
  // The service writes (its own hours, the workloads of the running pods): it gets a copy.
  copyFileSync(history.path, dbPath);
  const sims = await startSimFleet(settings.shape, fleetNodes(settings.shape), workDir);
  let service: ServiceProcess | undefined;
  try {
    service = await startServiceProcess({
      dbPath,
      workDir,
      organizationId: ORGANIZATION,
      leadInitiatives: [INITIATIVE],
      clockAt: FLEET_NOW,
      env: sims.env,
      startTimeoutMs: settings.syncTimeoutSeconds * 1000,
    });
    log(`service pid ${service.pid} up in ${(service.startupMs / 1000).toFixed(1)} s at ${service.url}, ` +
      `watching ${settings.shape.clusters} simulated clusters`);
    const now = await waitForFleet(service, sims.expected, settings.syncTimeoutSeconds, log);
    const seenAfterMs = Math.round(performance.now() - service.spawnedAt);
    const scenarios: ScenarioResult[] = [];
    for (const scenario of chosen) scenarios.push(await measure(service, scenario, settings, log));
    return {
      now,
      expected: sims.expected,
      seenAfterMs,
      startupMs: Math.round(service.startupMs),
      memory: service.memory(),
      loadAverageAfter: loadavg().map((l) => Math.round(l * 100) / 100),
      scenarios,
    };
  } finally {
    await service?.stop();
    await sims.close();
  }
}

/**
 * Polls GET /v1/fleet until `now` shows every node, then every pod's GPUs allocated (30 s more at
 * most: a pod counted otherwise is reported, not fatal, since the nodes are what the runs read).
 */
async function waitForFleet(service: ServiceProcess, expected: SimFleet['expected'], timeoutSeconds: number, log: Log): Promise<Now> {
  const headers = headersOf(service, 'admin');
  const read = async (): Promise<Now> => {
    const { status, body } = await getJson(`${service.url}/v1/fleet`, headers);
    if (status !== 200) {
      throw new Error(`GET /v1/fleet answered ${status}: ${JSON.stringify(body).slice(0, 500)}\n` +
        `--- service output ---\n${service.outputTail()}`);
    }
    return (body as { data?: { now?: Now } }).data?.now ?? {};
  };
  const pause = () => new Promise((resolve) => setTimeout(resolve, 200));
  const deadline = performance.now() + timeoutSeconds * 1000;
  let now = await read();
  while (now.nodes !== expected.nodes) {
    if (performance.now() > deadline) {
      throw new Error(`GET /v1/fleet shows ${now.nodes ?? 0} nodes after ${timeoutSeconds} s, not ${expected.nodes}\n` +
        `--- service output ---\n${service.outputTail()}`);
    }
    await pause();
    now = await read();
  }
  const podsDeadline = performance.now() + 30_000;
  while (now.allocated_gpus !== expected.allocatedGpus && performance.now() < podsDeadline) {
    await pause();
    now = await read();
  }
  const allocated = now.allocated_gpus === expected.allocatedGpus
    ? ''
    : ` !!! expected ${expected.allocatedGpus} GPUs allocated by ${expected.pods} pods`;
  log(`fleet now: ${now.nodes} nodes, ${now.total_gpus} GPUs, ${now.allocated_gpus} allocated, ` +
    `${now.nodes_unavailable} nodes out of service${allocated}`);
  return now;
}

async function measure(service: ServiceProcess, scenario: Scenario, settings: Settings, log: Log): Promise<ScenarioResult> {
  const target: Target = { url: service.url, paths: [scenario.path], headers: headersOf(service, 'admin') };
  const answer = await probe(target);
  if (answer.status !== 200) {
    log(`!!! WARNING: ${scenario.name} answers ${answer.status} before the run\n--- service output ---\n${service.outputTail()}`);
  }
  await loadRun(target, { connections: settings.connections, seconds: settings.warmupSeconds });
  // The requests the warm-up left queued in the service would be waited for by the first measured one.
  await waitForIdle(service);
  await waitForSteady(target);
  const sequential = await sequentialRun(target, settings.sequential);
  const load = await loadRun(target, { connections: settings.connections, seconds: settings.loadSeconds });
  await waitForIdle(service);
  const result: ScenarioResult = { ...scenario, caller: 'ORG_ADMIN', answer, sequential, load };
  const shown = answer.groups !== undefined
    ? `${answer.groups} groups, ${answer.seriesEntries ?? 0} days (${answer.seriesGroups ?? 0} day groups)`
    : `${answer.nodes ?? 0} of ${answer.totalCount ?? 0} nodes`;
  log(`  ${scenario.name.padEnd(27)} ${`${Math.round(answer.bytes / 1024)} KiB`.padStart(9)}  p50 ${fixed(sequential.p50).padStart(6)}  ` +
    `p90 ${fixed(sequential.p90).padStart(6)}  p99 ${fixed(sequential.p99).padStart(6)}  max ${fixed(sequential.max).padStart(6)} ms ` +
    `(n=${sequential.requests})  | c=${load.connections}: ${en(Math.round(load.reqPerSec)).padStart(6)} req/s, ` +
    `p99 ${fixed(load.p99)} ms  | ${shown}`);
  const errors = errorsOf(result);
  if (errors > 0) {
    log(`--- service output ---\n${service.outputTail()}`);
    log(`!!!!!!!! WARNING: ${scenario.name} had ${errors} failed requests (sequential ${JSON.stringify(sequential.statusCodes)}, ` +
      `${sequential.errors} errors; load ${JSON.stringify(load.statusCodes)}, ${load.errors} errors) !!!!!!!!`);
  }
  return result;
}

/** One answer of the scenario, read whole: its size and what it holds. */
async function probe(target: Target): Promise<Answer> {
  const response = await fetch(target.url + (target.paths[0] ?? '/'), { headers: target.headers });
  const text = await response.text();
  const answer: Answer = { status: response.status, bytes: Buffer.byteLength(text) };
  if (response.status !== 200) return answer;
  const body = JSON.parse(text) as {
    data?: { grouped?: unknown[]; series?: { grouped?: unknown[] }[]; nodes?: unknown[] };
    metadata?: { total_count?: number };
  };
  if (body.data?.nodes !== undefined) return { ...answer, nodes: body.data.nodes.length, totalCount: body.metadata?.total_count };
  const series = body.data?.series ?? [];
  return {
    ...answer,
    groups: body.data?.grouped?.length ?? 0,
    seriesEntries: series.length,
    seriesGroups: series.reduce((sum, s) => sum + (s.grouped?.length ?? 0), 0),
  };
}

/** Until the scenario's own request answers in steady time: two in a row within 1.5× of each other, 20 at most (as workloads-api). */
async function waitForSteady(target: Target): Promise<void> {
  let previous = Infinity;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const begin = performance.now();
    await getJson(target.url + (target.paths[0] ?? '/'), target.headers);
    const took = performance.now() - begin;
    if (took <= previous * 1.5 && previous <= took * 1.5) return;
    previous = took;
  }
}

function errorsOf(result: ScenarioResult): number {
  return result.sequential.non2xx + result.sequential.errors + result.load.non2xx + result.load.errors;
}

function checkTargets(scenarios: readonly ScenarioResult[]): TargetCheck[] {
  return scenarios.flatMap((s) => {
    if (s.kind === 'history-by-node') return [];
    const limit = TARGETS[s.kind].p99;
    const endpoint = s.kind === 'nodes' ? 'GET /v1/fleet/nodes' : 'GET /v1/fleet';
    return { target: `${endpoint} p99 ≤ ${limit} ms`, scenario: s.name, measured: s.sequential.p99, limit, met: s.sequential.p99 <= limit };
  });
}

if (isEntryPoint(import.meta.url)) {
  // `npx tsx bench/fleet.ts [--quick] [--scenarios nodes_limit_100,fleet_30d_day]` (a part of them → fleet.custom.json)
  const at = process.argv.indexOf('--scenarios');
  const scenarios = at < 0 ? undefined : (process.argv[at + 1] ?? '').split(',');
  runFleetBench({ quick: process.argv.includes('--quick'), scenarios }).then(
    (outcome) => process.exit(outcome.requestErrors > 0 ? 1 : 0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
