// Benchmark of the workload read endpoints over HTTP against the real service, at 1M rows (--quick: 10k,
// the CI smoke check; --sizes when run directly). Per dataset: copy the cached generated index, start the
// service in a child process, run each scenario (warm-up, sequential run on one connection for clean
// latency, throughput run on 8 connections), record the child's peak RSS, then explain and time the SQL
// the store runs for each scenario. Prints figures and writes issue 7's rows list, get and stats to
// bench/results/{list,get,stats}[.quick].json.
// It never asserts speed; request errors are reported loudly and make the run fail.
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Scope } from '../src/access/principal.js';
import type { TrendInterval } from '../src/domain/trend-interval.js';
import type { WorkloadStatus } from '../src/domain/workload.js';
import type { Keyset, StatsGroupKey, WorkloadFilter, WorkloadIndex } from '../src/query/ports.js';
import { openDatabase, sqliteIndex } from '../src/store/tooling.js';
import { mulberry32 } from '../sim/random.js';
import { BENCH_NOW, CACHE_DIR, GENERATOR_VERSION, SEED, benchPopulation, ensureWorkloadsDb, type DatasetInfo } from './data/generate-workloads.js';
import { describeEnvironment, formatBytes, writeResults } from './lib/report/environment.js';
import { getJson, loadRun, sequentialRun, type LoadResult, type RunResult, type Target } from './lib/measure/load.js';
import { startServiceProcess, type ProcessMemory, type ServiceProcess } from './lib/service/service-process.js';
import { SqlRecorder, profileOperation, type OperationProfile } from './lib/measure/sql-profile.js';
import { fixed, isEntryPoint } from './lib/report/format.js';
import type { BenchOutcome } from './lib/report/outcome.js';

export const NAME = 'workloads-api';
const DAY_MS = 86_400_000;
const ORGANIZATION = 'acme';

export interface Settings {
  sizes: number[];
  connections: number;
  warmupSeconds: number;
  loadSeconds: number;
  sequential: { maxRequests: number; maxSeconds: number; minRequests: number };
  /**
   * The sequential run of a scenario held to a p99 target (checkTargets): a nearest-rank p99 of 100
   * requests is their slowest one, so these run until this many requests, within their own time cap.
   */
  targeted?: { minRequests: number; maxSeconds: number };
  cursorPages: number;
  sampledIds: number;
  sqlBudgetMs: number;
}

// Issue 7's scale only (1M rows): the whole `npm run bench` must fit in 15 minutes on a fresh clone.
// `--sizes` (run directly) measures other sizes.
const FULL: Settings = {
  sizes: [1_000_000],
  connections: 8,
  warmupSeconds: 1,
  loadSeconds: 4,
  sequential: { maxRequests: 300, maxSeconds: 3, minRequests: 20 },
  targeted: { minRequests: 300, maxSeconds: 10 },
  cursorPages: 100,
  sampledIds: 1000,
  sqlBudgetMs: 600,
};

// The smoke check of the benchmark's own code (CI): every scenario runs, briefly. Its figures say
// nothing about the targets.
const QUICK: Settings = {
  sizes: [10_000],
  connections: 8,
  warmupSeconds: 0.2,
  loadSeconds: 0.5,
  sequential: { maxRequests: 40, maxSeconds: 0.5, minRequests: 10 },
  cursorPages: 20,
  sampledIds: 200,
  sqlBudgetMs: 50,
};

/** The later issue's targets, checked at 1M rows. Latency from the sequential run, req/s from the 8-connection run. */
const TARGETS = {
  list: { p50: 3, p99: 10, reqPerSec: 1000 },
  get: { p99: 5 },
  stats: { p99: 50 },
};

export type Kind = 'list' | 'get' | 'stats' | 'trends' | 'percentiles' | 'ranking' | 'capacity';

export interface Scenario {
  name: string;
  kind: Kind;
  description: string;
  as: 'admin' | 'lead';
  paths: string[];
  /** The same read on the store, in-process, for the SQL profile. */
  storeCall: (store: WorkloadIndex) => Promise<unknown>;
}

export interface ScenarioResult {
  name: string;
  kind: Kind;
  description: string;
  caller: string;
  distinctPaths: number;
  examplePath: string;
  sequential: RunResult;
  load: LoadResult;
  /** Entries of the series a trends scenario answers (its probe's `series`). */
  seriesEntries?: number;
}

export interface DatasetResult {
  rows: number;
  dataset: DatasetInfo & { cached: boolean };
  dbFileBytes: number;
  service: { startupMs: number; memory: ProcessMemory | null };
  /** Load averages right after the HTTP scenarios: the service and the load generator account for about 2. */
  loadAverageAfter: number[];
  scenarios: ScenarioResult[];
  sql: (OperationProfile & { scenario: string })[];
}

export interface TargetCheck {
  target: string;
  scenario: string;
  measured: number;
  limit: number;
  met: boolean;
}

export async function runWorkloadsApiBench(options: { quick: boolean; sizes?: number[]; scenarios?: string[]; log?: (line: string) => void }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = { ...(options.quick ? QUICK : FULL), ...(options.sizes ? { sizes: options.sizes } : {}) };
  const environment = describeEnvironment();
  const population = benchPopulation();
  const acme = population.find((o) => o.id === ORGANIZATION);
  if (acme === undefined) throw new Error(`The generated population has no organization "${ORGANIZATION}"`);
  const leadInitiatives = [1, 4, 8].map((rank) => acme.initiatives[rank]?.id ?? '');
  const filteredInitiative = acme.initiatives[0]?.id ?? '';
  const filteredStatus: WorkloadStatus = 'failed';
  log(`${NAME}: sizes ${settings.sizes.map((n) => n.toLocaleString('en-US')).join(', ')}${options.quick ? ' (quick)' : ''}; ` +
    `${environment.machine.cores} × ${environment.machine.cpuModel}, ${formatBytes(environment.machine.memoryBytes)}, Node ${environment.node}`);

  const [load1] = environment.loadAverageAtStart;
  if (load1 !== undefined && load1 > 1) {
    log(`!!! WARNING: load average ${load1} before the start: other processes are busy and the figures will be noisy`);
  }
  const datasets: DatasetResult[] = [];
  for (const rows of settings.sizes) {
    datasets.push(await runDataset(rows, settings, { leadInitiatives, filteredInitiative, filteredStatus, only: options.scenarios }, log));
  }

  const targets = checkTargets(datasets.find((d) => d.rows === 1_000_000));
  const results = {
    bench: NAME,
    ...environment,
    parameters: {
      quick: options.quick,
      ...settings,
      organization: ORGANIZATION,
      leadInitiatives,
      filtered: { status: filteredStatus, initiativeId: filteredInitiative },
      generator: { version: GENERATOR_VERSION, seed: SEED, benchNow: new Date(BENCH_NOW).toISOString() },
      latencyFrom: 'sequential run (one keep-alive connection, client-side wall time per request)',
      throughputFrom: `${settings.connections}-connection autocannon run`,
    },
    targets,
    datasets,
  };
  // One results file per row of issue 7's table (list, get, stats), each with its own scenarios and targets.
  const suffix = options.quick ? '.quick' : options.sizes !== undefined || options.scenarios !== undefined ? '.custom' : '';
  const files = (['list', 'get', 'stats'] as const).map((row) => {
    const kinds: Kind[] = row === 'stats' ? ['stats', 'trends', 'percentiles', 'ranking'] : [row];
    const { datasets: _all, targets: _targets, ...common } = results;
    return writeResults(`${row}${suffix}`, {
      ...common,
      bench: row,
      // The series are held to the statistics' targets and written with them.
      targets: targets.filter((t) => t.target.startsWith(row) || (row === 'stats' && (t.target.startsWith('trends') || t.target.startsWith('ranking')))),
      datasets: datasets.map((d) => ({
        ...d,
        scenarios: d.scenarios.filter((sc) => kinds.includes(sc.kind)),
        sql: d.sql.filter((q) => d.scenarios.some((sc) => sc.name === q.scenario && kinds.includes(sc.kind))),
      })),
    });
  });
  const resultsFile = files.join(', ');
  log(`${NAME}: results written to ${resultsFile}`);

  const requestErrors = datasets.reduce((sum, d) => sum + d.scenarios.reduce((s, r) => s + errorsOf(r), 0), 0);
  const notes = datasets.map((d) =>
    `${d.rows.toLocaleString('en-US')} rows: DB ${formatBytes(d.dbFileBytes)}, service peak RSS ${d.service.memory ? formatBytes(d.service.memory.peakRssBytes) : 'n/a'}, ` +
    `generation ${d.dataset.ingestSeconds.toFixed(1)} s (${d.dataset.rowsPerSecond.toLocaleString('en-US')} rows/s${d.dataset.cached ? ', cached' : ''})`,
  );
  for (const t of targets) notes.push(`target ${t.target} (${t.scenario}): ${t.measured} vs ${t.limit} → ${t.met ? 'met' : 'MISSED'}`);
  return {
    name: NAME,
    resultsFile,
    requestErrors,
    table: {
      header: ['rows', 'scenario', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', `req/s c=${settings.connections}`, `p99 ms c=${settings.connections}`, 'errors'],
      rows: datasets.flatMap((d) =>
        d.scenarios.map((s) => [
          d.rows.toLocaleString('en-US'), s.name, fixed(s.sequential.p50), fixed(s.sequential.p90), fixed(s.sequential.p99), fixed(s.sequential.max),
          Math.round(s.load.reqPerSec).toLocaleString('en-US'), fixed(s.load.p99), String(errorsOf(s)),
        ]),
      ),
    },
    notes,
  };
}

async function runDataset(
  rows: number,
  settings: Settings,
  choices: { leadInitiatives: string[]; filteredInitiative: string; filteredStatus: WorkloadStatus; only?: string[] },
  log: (line: string) => void,
): Promise<DatasetResult> {
  const dataset = await ensureWorkloadsDb(rows, { log });
  const workDir = join(CACHE_DIR, `run-${process.pid}-${rows}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const dbPath = join(workDir, 'index.db');
  try {
    // The service writes (migration check, WAL, retention): it gets a copy, the cache stays pristine.
    copyFileSync(dataset.path, dbPath);
    const ids = sampleIds(dbPath, settings.sampledIds, rows);

    const service = await startServiceProcess({ dbPath, workDir, organizationId: ORGANIZATION, leadInitiatives: choices.leadInitiatives, clockAt: BENCH_NOW });
    log(`${rows.toLocaleString('en-US')} rows: service pid ${service.pid} up in ${(service.startupMs / 1000).toFixed(1)} s at ${service.url}`);
    let scenarios: Scenario[];
    const scenarioResults: ScenarioResult[] = [];
    let memory: ProcessMemory | null;
    let loadAverageAfter: number[];
    try {
      const cursors = await gatherCursors(service, settings.cursorPages);
      scenarios = buildScenarios({ ...choices, ids, cursors }).filter((s) => choices.only === undefined || choices.only.includes(s.name));
      if (scenarios.length === 0) throw new Error(`No scenario is named ${JSON.stringify(choices.only)}`);
      for (const scenario of scenarios) {
        scenarioResults.push(await measure(service, scenario, settings, rows, log));
      }
      memory = service.memory();
      loadAverageAfter = loadavg().map((l) => Math.round(l * 100) / 100);
    } finally {
      await service.stop();
    }
    log(`${rows.toLocaleString('en-US')} rows: service peak RSS ${memory ? formatBytes(memory.peakRssBytes) : 'n/a'}; profiling the SQL of each scenario`);
    const sql = await profileSql(dbPath, scenarios, settings.sqlBudgetMs);
    for (const profile of sql) {
      log(`  sql ${profile.scenario.padEnd(28)} store call ${fixed(profile.medianMs)} ms = ${profile.statements.map((s) => `${fixed(s.medianMs)} ms`).join(' + ')}`);
    }
    return {
      rows,
      dataset: { ...dataset.info, cached: dataset.cached },
      dbFileBytes: statSync(dataset.path).size,
      service: { startupMs: Math.round(service.startupMs), memory },
      loadAverageAfter,
      scenarios: scenarioResults,
      sql,
    };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Ids of the organization's rows, spread over the whole table (deterministic): a read-only look at the file. */
export function sampleIds(dbPath: string, count: number, rows: number): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const random = mulberry32(SEED ^ 0x1d5);
    const statement = db.prepare('SELECT workload_id FROM workloads WHERE rowid = ? AND organization_id = ?').pluck();
    const ids: string[] = [];
    for (let attempt = 0; ids.length < count && attempt < count * 10; attempt += 1) {
      const id = statement.get(1 + Math.floor(random() * rows), ORGANIZATION) as string | undefined;
      if (id !== undefined) ids.push(id);
    }
    if (ids.length === 0) throw new Error(`No row of organization "${ORGANIZATION}" found in ${dbPath}`);
    return ids;
  } finally {
    db.close();
  }
}

/** next_token of pages 2..pages+1 of the default list, walked for real through the API. */
export async function gatherCursors(service: ServiceProcess, pages: number): Promise<string[]> {
  const cursors: string[] = [];
  let path = '/v1/workloads';
  for (let page = 0; page < pages; page += 1) {
    const { status, body } = await getJson(service.url + path, headersOf(service, 'admin'));
    if (status !== 200) {
      throw new Error(`Cannot gather cursors: GET ${path} answered ${status}: ${JSON.stringify(body)}\n--- service output ---\n${service.outputTail()}`);
    }
    const token = (body as { metadata?: { next_token?: string | null } }).metadata?.next_token;
    if (typeof token !== 'string') break;
    cursors.push(token);
    path = `/v1/workloads?next_token=${encodeURIComponent(token)}`;
  }
  if (cursors.length === 0) throw new Error('Cannot gather cursors: the first page has no next_token');
  return cursors;
}

export function buildScenarios(input: { leadInitiatives: string[]; filteredInitiative: string; filteredStatus: WorkloadStatus; ids: string[]; cursors: string[] }): Scenario[] {
  const admin: Scope = { organizationId: ORGANIZATION, initiatives: null };
  const lead: Scope = { organizationId: ORGANIZATION, initiatives: input.leadInitiatives };
  const page = { limit: 20, after: null };
  const middleCursor = decodeKeyset(input.cursors[Math.floor(input.cursors.length / 2)] ?? '');
  const statsFilter = (): WorkloadFilter => ({ scope: admin, submittedFrom: BENCH_NOW - 30 * DAY_MS, submittedBefore: BENCH_NOW + 1 });
  const usageRanking = (sortBy: 'idle_gpu_hours' | 'gpu_efficiency', as: 'admin' | 'lead'): Scenario => ({
    name: `ranking_${sortBy}${as === 'lead' ? '_team_lead' : ''}`,
    kind: 'ranking',
    description: `GET /v1/workloads/metrics?sort_by=${sortBy}, top 10 (${as === 'lead' ? 'TEAM_LEAD' : 'ORG_ADMIN'}): lifetime usage, ${as === 'lead' ? 'the lead\'s teams walked one by one' : 'every team walked'}`,
    as,
    paths: [`/v1/workloads/metrics?sort_by=${sortBy}`],
    storeCall: (store) => store.rankByUsage({ scope: as === 'lead' ? lead : admin }, { sortBy, order: 'desc', limit: 10, now: BENCH_NOW }),
  });
  const stats = (groupBy: StatsGroupKey | null): Scenario => ({
    name: groupBy === null ? 'stats_30d' : `stats_30d_by_${groupBy}`,
    kind: 'stats',
    description: `GET /v1/workloads/stats time_range=last_30_days${groupBy === null ? '' : ` group_by=${groupBy}`} (ORG_ADMIN)`,
    as: 'admin',
    paths: [`/v1/workloads/stats?time_range=last_30_days${groupBy === null ? '' : `&group_by=${groupBy}`}`],
    storeCall: (store) => store.stats(statsFilter(), groupBy, BENCH_NOW),
  });
  // The series of issue 18: days and weeks are held to the statistics' 50 ms per 1,000 entries (checkTargets).
  const trends = (interval: TrendInterval, days: 7 | 30, groupBy: StatsGroupKey | null): Scenario => ({
    name: `trends_${days}d_${interval}${groupBy === null ? '' : `_by_${groupBy}`}`,
    kind: 'trends',
    description: `GET /v1/workloads/stats time_range=last_${days}_days interval=${interval}${groupBy === null ? '' : ` group_by=${groupBy}`} (ORG_ADMIN)`,
    as: 'admin',
    paths: [`/v1/workloads/stats?time_range=last_${days}_days&interval=${interval}${groupBy === null ? '' : `&group_by=${groupBy}`}`],
    storeCall: (store) => store.trends({ scope: admin, submittedFrom: BENCH_NOW - days * DAY_MS, submittedBefore: BENCH_NOW + 1 }, { groupBy, interval }, BENCH_NOW),
  });
  // The opt-in percentiles of queue time read every workload of the range (docs/performance.md).
  const queuePercentiles = (groupBy: StatsGroupKey | null): Scenario => ({
    name: `stats_30d${groupBy === null ? '' : `_by_${groupBy}`}_queue_p95`,
    kind: 'percentiles',
    description: `GET /v1/workloads/stats time_range=last_30_days${groupBy === null ? '' : ` group_by=${groupBy}`} queue_percentiles=95 (ORG_ADMIN)`,
    as: 'admin',
    paths: [`/v1/workloads/stats?time_range=last_30_days${groupBy === null ? '' : `&group_by=${groupBy}`}&queue_percentiles=95`],
    storeCall: (store) => store.queuePercentiles(statsFilter(), { groupBy, percentiles: [95] }, BENCH_NOW),
  });
  return [
    {
      name: 'list_default',
      kind: 'list',
      description: 'GET /v1/workloads, first page, default limit 20 (ORG_ADMIN)',
      as: 'admin',
      paths: ['/v1/workloads'],
      storeCall: (store) => store.list({ scope: admin }, page),
    },
    {
      name: 'list_status_initiative',
      kind: 'list',
      description: `GET /v1/workloads?status=${input.filteredStatus}&initiative_id=${input.filteredInitiative} (ORG_ADMIN)`,
      as: 'admin',
      paths: [`/v1/workloads?status=${input.filteredStatus}&initiative_id=${input.filteredInitiative}`],
      storeCall: (store) => store.list({ scope: admin, status: input.filteredStatus, initiativeId: input.filteredInitiative }, page),
    },
    {
      name: 'list_team_lead',
      kind: 'list',
      description: `GET /v1/workloads as TEAM_LEAD of ${input.leadInitiatives.join(', ')} (scope IN list)`,
      as: 'lead',
      paths: ['/v1/workloads'],
      storeCall: (store) => store.list({ scope: lead }, page),
    },
    {
      name: 'list_next_pages',
      kind: 'list',
      description: `GET /v1/workloads?next_token=… pages 2..${input.cursors.length + 1}, real cursors (ORG_ADMIN)`,
      as: 'admin',
      paths: input.cursors.map((token) => `/v1/workloads?next_token=${encodeURIComponent(token)}`),
      storeCall: (store) => store.list({ scope: admin }, { limit: 20, after: middleCursor }),
    },
    {
      name: 'get_by_id',
      kind: 'get',
      description: `GET /v1/workloads/{id}, ${input.ids.length} random existing ids (ORG_ADMIN)`,
      as: 'admin',
      paths: input.ids.map((id) => `/v1/workloads/${id}`),
      storeCall: (store) => store.get(input.ids[0] ?? '', BENCH_NOW),
    },
    stats(null),
    stats('submitted_by'),
    stats('initiative_id'),
    stats('instance_type'),
    stats('failure_reason'),
    trends('day', 30, null),
    trends('day', 30, 'initiative_id'),
    trends('week', 30, 'submitted_by'),
    trends('hour', 7, null),
    queuePercentiles(null),
    queuePercentiles('submitted_by'),
    {
      name: 'ranking_gpu_hours',
      kind: 'ranking',
      description: 'GET /v1/workloads/metrics?sort_by=gpu_hours, top 10 (ORG_ADMIN)',
      as: 'admin',
      paths: ['/v1/workloads/metrics?sort_by=gpu_hours'],
      storeCall: (store) => store.rankByGpuHours({ scope: admin }, { order: 'desc', limit: 10, now: BENCH_NOW }),
    },
    {
      name: 'ranking_queue_seconds',
      kind: 'ranking',
      description: 'GET /v1/workloads/metrics?sort_by=queue_seconds, top 10 (ORG_ADMIN): ended waits per (team, status) from their index, pending ones at now',
      as: 'admin',
      paths: ['/v1/workloads/metrics?sort_by=queue_seconds'],
      storeCall: (store) => store.rankByQueue({ scope: admin }, { order: 'desc', limit: 10, now: BENCH_NOW }),
    },
    usageRanking('idle_gpu_hours', 'admin'),
    usageRanking('gpu_efficiency', 'admin'),
    usageRanking('idle_gpu_hours', 'lead'),
  ];
}

/** The position a next_token carries (its layout is [version, submittedAt, workloadId, digest]). */
function decodeKeyset(token: string): Keyset {
  const [, submittedAt, workloadId] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [number, number, string, string];
  return { submittedAt, workloadId };
}

export function headersOf(service: ServiceProcess, as: 'admin' | 'lead'): Record<string, string> {
  const caller = service.callers[as];
  return { authorization: `Bearer ${caller.token}`, 'x-organization-id': caller.organizationId };
}

export async function measure(service: ServiceProcess, scenario: Scenario, settings: Settings, rows: number, log: (line: string) => void): Promise<ScenarioResult> {
  const target: Target = { url: service.url, paths: scenario.paths, headers: headersOf(service, scenario.as) };
  const probe = await getJson(service.url + (scenario.paths[0] ?? '/'), target.headers);
  if (probe.status !== 200) {
    log(`!!! WARNING: ${scenario.name} answers ${probe.status} before the run: ${JSON.stringify(probe.body).slice(0, 500)}\n--- service output ---\n${service.outputTail()}`);
  }
  await loadRun(target, { connections: settings.connections, seconds: settings.warmupSeconds });
  // autocannon stops sending when its time is up, but the requests already sent still run in the
  // service, one after the other: measured sequentially right away, the first request would wait for
  // them all (seconds, for an endpoint of a few hundred ms).
  await waitForIdle(service);
  await waitForSteady(target);
  const sequential = await sequentialRun(target, heldToP99(scenario) && settings.targeted !== undefined
    ? { ...settings.sequential, ...settings.targeted }
    : settings.sequential);
  const load = await loadRun(target, { connections: settings.connections, seconds: settings.loadSeconds });
  await waitForIdle(service);
  const result: ScenarioResult = {
    name: scenario.name,
    kind: scenario.kind,
    description: scenario.description,
    caller: scenario.as === 'admin' ? 'ORG_ADMIN' : 'TEAM_LEAD',
    distinctPaths: scenario.paths.length,
    examplePath: scenario.paths[0] ?? '',
    ...(scenario.kind === 'trends' ? { seriesEntries: seriesEntriesOf(probe.body) } : {}),
    sequential,
    load,
  };
  log(
    `  ${rows.toLocaleString('en-US').padStart(9)} ${scenario.name.padEnd(28)} ` +
      `p50 ${fixed(sequential.p50).padStart(7)}  p90 ${fixed(sequential.p90).padStart(7)}  p99 ${fixed(sequential.p99).padStart(7)}  max ${fixed(sequential.max).padStart(7)} ms (n=${sequential.requests})  | ` +
      `c=${load.connections}: ${Math.round(load.reqPerSec).toLocaleString('en-US').padStart(6)} req/s, p99 ${fixed(load.p99)} ms`,
  );
  const errors = errorsOf(result);
  if (errors > 0) {
    log(`--- service output ---\n${service.outputTail()}`);
    log(`!!!!!!!! WARNING: ${scenario.name} at ${rows.toLocaleString('en-US')} rows had ${errors} failed requests ` +
      `(sequential ${JSON.stringify(sequential.statusCodes)}, ${sequential.errors} errors; load ${JSON.stringify(load.statusCodes)}, ${load.errors} errors) !!!!!!!!`);
  }
  return result;
}

/**
 * Waits until the scenario's own request answers in steady time: two in a row within 1.5× of each
 * other, 20 at most. /v1/health never waits for a read worker, so it answers quickly while the reads
 * the load run left behind still drain, one after the other, from the worker the scenario needs: the
 * first measured request used to wait for them all (213 ms against 37 ms for the day × initiative
 * series, the p99 of a run of 80).
 */
async function waitForSteady(target: Target): Promise<void> {
  let previous = Infinity;
  for (let probe = 0; probe < 20; probe += 1) {
    const begin = performance.now();
    await getJson(target.url + (target.paths[0] ?? '/'), target.headers);
    const took = performance.now() - begin;
    if (took <= previous * 1.5 && previous <= took * 1.5) return;
    previous = took;
  }
}

/** Waits until /v1/health answers within 5 ms three times in a row (the backlog is gone), 60 s at most. */
export async function waitForIdle(service: ServiceProcess): Promise<void> {
  const deadline = performance.now() + 60_000;
  let quick = 0;
  while (quick < 3 && performance.now() < deadline) {
    const begin = performance.now();
    await getJson(`${service.url}/v1/health`, {});
    quick = performance.now() - begin < 5 ? quick + 1 : 0;
  }
}

export function errorsOf(result: ScenarioResult): number {
  return result.sequential.non2xx + result.sequential.errors + result.load.non2xx + result.load.errors;
}

/**
 * The store's own read port over a recording connection that the service's open set up (its page
 * cache and memory map shape the times): openBackend builds its port over a connection of its own.
 */
async function profileSql(dbPath: string, scenarios: Scenario[], budgetMs: number): Promise<(OperationProfile & { scenario: string })[]> {
  const db = openDatabase(dbPath);
  try {
    const recorder = new SqlRecorder(db);
    const store = sqliteIndex(recorder.db);
    const profiles: (OperationProfile & { scenario: string })[] = [];
    for (const scenario of scenarios) {
      profiles.push({ scenario: scenario.name, ...(await profileOperation(recorder, () => scenario.storeCall(store), { budgetMs })) });
    }
    return profiles;
  } finally {
    db.close();
  }
}

/** Whether checkTargets holds the scenario's p99 to a target. */
function heldToP99(scenario: Pick<Scenario, 'kind' | 'name'>): boolean {
  // Hours are read from the rows until an hourly rollup exists (docs/performance.md): no target yet.
  return ['list', 'get', 'stats', 'ranking'].includes(scenario.kind) || (scenario.kind === 'trends' && !scenario.name.includes('_hour'));
}

/** The entries a series is held to the statistics' p99 for (checkTargets). */
const SERIES_ENTRIES_PER_TARGET = 1000;

function seriesEntriesOf(body: unknown): number | undefined {
  const series = (body as { data?: { series?: unknown } } | null)?.data?.series;
  return Array.isArray(series) ? series.length : undefined;
}

function checkTargets(dataset: DatasetResult | undefined): TargetCheck[] {
  if (dataset === undefined) return [];
  const checks: TargetCheck[] = [];
  const check = (target: string, scenario: string, measured: number, limit: number, atMost: boolean) =>
    checks.push({ target, scenario, measured, limit, met: atMost ? measured <= limit : measured >= limit });
  for (const s of dataset.scenarios) {
    if (s.kind === 'list') {
      check(`list p50 ≤ ${TARGETS.list.p50} ms`, s.name, s.sequential.p50, TARGETS.list.p50, true);
      check(`list p99 ≤ ${TARGETS.list.p99} ms`, s.name, s.sequential.p99, TARGETS.list.p99, true);
      check(`list ≥ ${TARGETS.list.reqPerSec} req/s`, s.name, s.load.reqPerSec, TARGETS.list.reqPerSec, false);
    } else if (s.kind === 'get') {
      check(`get p99 ≤ ${TARGETS.get.p99} ms`, s.name, s.sequential.p99, TARGETS.get.p99, true);
    } else if (s.kind === 'stats') {
      check(`stats p99 ≤ ${TARGETS.stats.p99} ms`, s.name, s.sequential.p99, TARGETS.stats.p99, true);
    } else if (s.kind === 'ranking') {
      // Issue 18's rankings are held to the statistics' 50 ms; the opt-in queue percentiles have no target (docs/api.md).
      check(`ranking p99 ≤ ${TARGETS.stats.p99} ms`, s.name, s.sequential.p99, TARGETS.stats.p99, true);
    } else if (s.kind === 'trends' && heldToP99(s)) {
      // Issue 18 holds the series by day and team (840 entries) to the statistics' 50 ms. A series
      // costs per entry (its rows, their presentation, about 330 bytes of JSON each): a longer one,
      // such as a month by week and submitter (1,750), gets 50 ms per 1,000 entries.
      const limit = TARGETS.stats.p99 * Math.max(1, (s.seriesEntries ?? 0) / SERIES_ENTRIES_PER_TARGET);
      check(`trends p99 ≤ ${fixed(limit)} ms (${s.seriesEntries ?? '?'} entries)`, s.name, s.sequential.p99, limit, true);
    }
  }
  return checks;
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/workloads-api.ts [--quick] [--sizes 100000,1000000] [--scenarios trends_30d_day,stats_30d]`
  // (other sizes or a part of the scenarios → list/get/stats.custom.json)
  const listArgument = (name: string) => {
    const at = process.argv.indexOf(name);
    return at < 0 ? undefined : (process.argv[at + 1] ?? '').split(',');
  };
  const sizes = listArgument('--sizes')?.map(Number);
  runWorkloadsApiBench({ quick: process.argv.includes('--quick'), sizes, scenarios: listArgument('--scenarios') }).then(
    (outcome) => process.exit(outcome.requestErrors > 0 ? 1 : 0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
