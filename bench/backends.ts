// The two index backends side by side, in one run (issue 16 item 8): the same generated rows
// (bench/data/generate-workloads.ts, 1M; --quick: 10k) in SQLite and in PostgreSQL, the real service on
// each in turn, and the same HTTP scenarios as bench/workloads-api.ts plus /v1/capacity: p50 and p99
// per endpoint per backend, the ratio PostgreSQL ÷ SQLite, and the CPU each request costs the service
// and the database server. Then the write path on each backend (bench/lib/kube-sim/backend-ingest.ts), and
// PostgreSQL alone at fleet scale (10M rows; --quick: 20k) for the lists and statistics.
// Prints figures, writes bench/results/backends[.quick].json, and a full run rewrites the tables of
// docs/performance.md between the backends markers. It never asserts speed.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Scope } from '../src/access/principal.js';
import { BENCH_NOW, CACHE_DIR, GENERATOR_VERSION, SEED, benchPopulation, ensureWorkloadsDb } from './data/generate-workloads.js';
import type { ClusterShape } from './data/generate-cluster.js';
import { measureIngest, type IngestResult, type IngestSettings } from './lib/kube-sim/backend-ingest.js';
import { describeEnvironment, REPO_DIR, writeResults } from './lib/report/environment.js';
import { fixed, isEntryPoint, round } from './lib/report/format.js';
import { sequentialRun } from './lib/measure/load.js';
import { ensurePostgresDataset, type PostgresDataset } from './lib/postgres/dataset.js';
import { skippedWithoutPostgres } from './lib/postgres/required.js';
import { startServiceProcess, type ProcessMemory, type ServiceProcess } from './lib/service/service-process.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { replaceBetween } from './lib/report/targets.js';
import {
  buildScenarios, errorsOf, gatherCursors, headersOf, measure, sampleIds, type Kind, type Scenario, type ScenarioResult, type Settings,
} from './workloads-api.js';

export const NAME = 'backends';
const ORGANIZATION = 'acme';
type Backend = 'sqlite' | 'postgres';

interface BackendsSettings {
  rows: number;
  /** PostgreSQL alone, lists and statistics. */
  scaleRows: number;
  api: Settings;
  /** Requests of the pass that measures CPU per request (after the latency runs). */
  cpuPass: { maxRequests: number; maxSeconds: number; minRequests: number };
  ingest: IngestSettings;
}

const INGEST_CLUSTER: ClusterShape = { pods: 20_000, jobs: 2_000, namespaces: 20, nodes: 250 };

const FULL: BackendsSettings = {
  rows: 1_000_000,
  scaleRows: 10_000_000,
  api: {
    sizes: [1_000_000], connections: 8, warmupSeconds: 1, loadSeconds: 4,
    sequential: { maxRequests: 300, maxSeconds: 3, minRequests: 20 }, cursorPages: 100, sampledIds: 1000, sqlBudgetMs: 0,
  },
  cpuPass: { maxRequests: 200, maxSeconds: 3, minRequests: 20 },
  // 5,000 is issue 16's target per writer; 10,000 is issue 7's, about what this process can offer.
  ingest: { shape: INGEST_CLUSTER, rates: [2_500, 5_000, 10_000], stepSeconds: 10, syncTimeoutSeconds: 300, catchUpTimeoutSeconds: 120 },
};

const QUICK: BackendsSettings = {
  rows: 10_000,
  scaleRows: 20_000,
  api: {
    sizes: [10_000], connections: 4, warmupSeconds: 0.2, loadSeconds: 0.4,
    sequential: { maxRequests: 30, maxSeconds: 0.4, minRequests: 10 }, cursorPages: 10, sampledIds: 100, sqlBudgetMs: 0,
  },
  cpuPass: { maxRequests: 20, maxSeconds: 0.4, minRequests: 10 },
  ingest: { shape: { pods: 1_000, jobs: 100, namespaces: 5, nodes: 16 }, rates: [1_000, 2_000], stepSeconds: 3, syncTimeoutSeconds: 120, catchUpTimeoutSeconds: 60 },
};

/** Issue 16's targets on PostgreSQL. */
const TARGETS = { listP99: 15, statsP99: 80, ingestPerWriter: 5_000 };

interface ScenarioFigures extends ScenarioResult {
  /** CPU per request over a separate sequential pass: the service's, and the database server's (PostgreSQL). */
  cpuMsPerRequest: { service: number | null; database: number | null; requests: number };
}

interface BackendRun {
  backend: Backend;
  rows: number;
  startupMs: number;
  memory: ProcessMemory | null;
  loadAverageAfter: number[];
  scenarios: ScenarioFigures[];
}

const docMarkers = {
  begin: '<!-- bench:backends:begin (written by npm run bench; do not edit by hand) -->',
  end: '<!-- bench:backends:end -->',
};

/** workloads-api's choices: the TEAM_LEAD's initiatives and the filtered list's. */
function scenarioChoices() {
  const acme = benchPopulation().find((o) => o.id === ORGANIZATION);
  if (acme === undefined) throw new Error(`The generated population has no organization "${ORGANIZATION}"`);
  return {
    leadInitiatives: [1, 4, 8].map((rank) => acme.initiatives[rank]?.id ?? ''),
    filteredInitiative: acme.initiatives[0]?.id ?? '',
    filteredStatus: 'failed' as const,
  };
}

function capacityScenario(): Scenario {
  const admin: Scope = { organizationId: ORGANIZATION, initiatives: null };
  return {
    name: 'capacity',
    kind: 'capacity',
    description: 'GET /v1/capacity, no budget (period total: every workload since ever) (ORG_ADMIN)',
    as: 'admin',
    paths: ['/v1/capacity'],
    storeCall: (store) => store.usage({ scope: admin }, { from: null, to: BENCH_NOW }),
  };
}

export async function runBackendsBench(options: { quick: boolean; log?: (line: string) => void; skipScale?: boolean }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  log(`${NAME}: ${settings.rows.toLocaleString('en-US')} rows on SQLite and PostgreSQL, then ${settings.scaleRows.toLocaleString('en-US')} on PostgreSQL` +
    `${options.quick ? ' (quick)' : ''}; ${environment.machine.cores} × ${environment.machine.cpuModel}, load average ${environment.loadAverageAtStart.join(' ')}`);
  const suffix = options.quick ? '.quick' : '';
  const skipped = skippedWithoutPostgres(NAME, { quick: options.quick, environment, log });
  if (skipped !== null) return skipped;
  const choices = scenarioChoices();
  const { runs, ingest, datasets } = await measureBackends(settings, { choices, skipScale: options.skipScale === true }, log);

  const targets = checkTargets(runs, ingest.postgres, settings);
  const tables = markdownTables(runs, ingest, settings, environment.loadAverageAtStart);
  const resultsFile = writeResults(`${NAME}${suffix}`, {
    bench: NAME,
    ...environment,
    parameters: {
      quick: options.quick,
      ...settings,
      organization: ORGANIZATION,
      ...choices,
      generator: { version: GENERATOR_VERSION, seed: SEED, benchNow: new Date(BENCH_NOW).toISOString() },
      latencyFrom: 'sequential run (one keep-alive connection, client-side wall time per request)',
      throughputFrom: `${settings.api.connections}-connection autocannon run`,
      cpuFrom: 'a separate sequential pass: /proc CPU time of the service, and of the PostgreSQL server (postmaster and its processes), divided by the requests',
    },
    datasets,
    targets,
    runs,
    ingest,
    markdown: tables,
  });
  log(`${NAME}: results written to ${resultsFile}`);
  if (!options.quick) writeDocTables(tables, log);
  const requestErrors = runs.reduce((sum, r) => sum + r.scenarios.reduce((s, sc) => s + errorsOf(sc), 0), 0);
  return {
    name: NAME,
    resultsFile,
    requestErrors,
    table: comparisonTable(runs, settings.rows),
    notes: [
      ...targets.map((t) => `PostgreSQL target ${t.target} at ${t.rows.toLocaleString('en-US')} rows (${t.scenario}): ${t.measured} → ${t.met ? 'met' : 'MISSED'}`),
      ...(['sqlite', 'postgres'] as const).map((b) => `ingest ${b}: ${(ingest[b]?.steps ?? []).map((s) => `${s.targetRate} offered → ${s.sustainedRate} sustained`).join(', ')} ev/s`),
    ],
  };
}

/** Reads and ingest on SQLite, the same on PostgreSQL, then PostgreSQL's reads at fleet scale (unless skipped). */
async function measureBackends(settings: BackendsSettings, options: { choices: ReturnType<typeof scenarioChoices>; skipScale: boolean }, log: (line: string) => void) {
  const { choices } = options;
  const workDir = join(CACHE_DIR, `${NAME}-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const sqliteData = await ensureWorkloadsDb(settings.rows, { log });
  const sqlitePath = join(workDir, 'index.db');
  const ingest: Partial<Record<Backend, IngestResult>> = {};
  const runs: BackendRun[] = [];
  let pgInfo: PostgresDataset['info'] | undefined;
  let pgSettings: Record<string, string> | undefined;
  try {
    copyFileSync(sqliteData.path, sqlitePath);
    const ids = sampleIds(sqlitePath, settings.api.sampledIds, settings.rows);
    const scenariosFor = (cursors: string[]) => [...buildScenarios({ ...choices, ids, cursors }), capacityScenario()];

    // SQLite: reads on a copy of the cached file; ingest on another copy.
    log(`  sqlite, ${settings.rows.toLocaleString('en-US')} rows`);
    runs.push(await readRun('sqlite', settings, { GPUCAP_DB_PATH: sqlitePath }, workDir, () => null, scenariosFor, log));
    copyFileSync(sqliteData.path, sqlitePath);
    log('  sqlite, ingest');
    ingest.sqlite = await measureIngest({ env: { GPUCAP_DB_PATH: sqlitePath }, workDir: join(workDir, 'ingest-sqlite'), databaseCpuSeconds: () => null }, settings.ingest, log);
    rmSync(sqlitePath, { force: true });

    const postgres = await measurePostgres(settings, { workDir, scenariosFor }, log);
    runs.push(postgres.run);
    ingest.postgres = postgres.ingest;
    pgInfo = postgres.info;
    pgSettings = postgres.settings;

    // PostgreSQL at fleet scale: reads only, straight on the cached rows.
    if (!options.skipScale) {
      const big = await ensurePostgresDataset(settings.scaleRows, { log });
      try {
        log(`  postgres, ${settings.scaleRows.toLocaleString('en-US')} rows (lists and statistics)`);
        const scaleScenarios = (cursors: string[]) => buildScenarios({ ...choices, ids: ['none'], cursors }).filter((s) => s.kind === 'list' || s.kind === 'stats');
        runs.push(await readRun('postgres', { ...settings, rows: settings.scaleRows }, postgresEnv(big.url), workDir, () => big.cpuSeconds(), scaleScenarios, log));
      } finally {
        await big.stop();
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  return { runs, ingest, datasets: { sqlite: { ...sqliteData.info, cached: sqliteData.cached }, postgres: pgInfo, postgresSettings: pgSettings } };
}

/** PostgreSQL: the same rows, a copy of them per run (the service writes its lease, ingest its rows). */
async function measurePostgres(settings: BackendsSettings, at: { workDir: string; scenariosFor: (cursors: string[]) => Scenario[] }, log: (line: string) => void) {
  const pg = await ensurePostgresDataset(settings.rows, { log });
  try {
    let run: BackendRun;
    const reads = await pg.copy('reads');
    try {
      log(`  postgres, ${settings.rows.toLocaleString('en-US')} rows`);
      run = await readRun('postgres', settings, postgresEnv(reads.url), at.workDir, () => pg.cpuSeconds(), at.scenariosFor, log);
    } finally {
      await reads.drop();
    }
    let ingest: IngestResult;
    const writes = await pg.copy('ingest');
    try {
      log('  postgres, ingest');
      ingest = await measureIngest({ env: postgresEnv(writes.url), workDir: join(at.workDir, 'ingest-postgres'), databaseCpuSeconds: () => pg.cpuSeconds() }, settings.ingest, log);
    } finally {
      await writes.drop();
    }
    return { run, ingest, info: pg.info, settings: pg.settings };
  } finally {
    await pg.stop();
  }
}

/** A full run's tables, between the backends markers of docs/performance.md. */
function writeDocTables(tables: string, log: (line: string) => void): void {
  const doc = join(REPO_DIR, 'docs', 'performance.md');
  const text = replaceBetween(readFileSync(doc, 'utf8'), docMarkers.begin, docMarkers.end, tables);
  if (text === null) log(`!!! ${doc} has no backends markers; tables not written`);
  else writeFileSync(doc, text);
}

function postgresEnv(url: string): Record<string, string> {
  // An empty variable is "not set" to the service (config/load.ts): the benchmark's default file path must not conflict with db_url.
  return { GPUCAP_DB_PATH: '', GPUCAP_DB_URL: url };
}

async function readRun(
  backend: Backend,
  settings: BackendsSettings,
  env: Record<string, string>,
  workDir: string,
  databaseCpu: () => number | null,
  scenariosFor: (cursors: string[]) => Scenario[],
  log: (line: string) => void,
): Promise<BackendRun> {
  const service = await startServiceProcess({
    dbPath: env.GPUCAP_DB_PATH ?? '', workDir, organizationId: ORGANIZATION, leadInitiatives: scenarioChoices().leadInitiatives,
    clockAt: BENCH_NOW, env, startTimeoutMs: 300_000,
  });
  try {
    const scenarios = scenariosFor(await gatherCursors(service, settings.api.cursorPages));
    const figures: ScenarioFigures[] = [];
    for (const scenario of scenarios) {
      const result = await measure(service, scenario, settings.api, settings.rows, log);
      figures.push({ ...result, cpuMsPerRequest: await cpuPass(service, scenario, settings, databaseCpu) });
    }
    return {
      backend,
      rows: settings.rows,
      startupMs: Math.round(service.startupMs),
      memory: service.memory(),
      loadAverageAfter: loadavg().map(round),
      scenarios: figures,
    };
  } finally {
    await service.stop();
  }
}

async function cpuPass(service: ServiceProcess, scenario: Scenario, settings: BackendsSettings, databaseCpu: () => number | null): Promise<ScenarioFigures['cpuMsPerRequest']> {
  const before = { service: service.cpuSeconds(), database: databaseCpu() };
  const pass = await sequentialRun({ url: service.url, paths: scenario.paths, headers: headersOf(service, scenario.as) }, settings.cpuPass);
  const perRequest = (from: number | null, to: number | null) => (from === null || to === null || pass.requests === 0 ? null : round(((to - from) * 1000) / pass.requests));
  return { service: perRequest(before.service, service.cpuSeconds()), database: perRequest(before.database, databaseCpu()), requests: pass.requests };
}

interface TargetCheck {
  target: string;
  rows: number;
  scenario: string;
  measured: number;
  limit: number;
  met: boolean;
}

function checkTargets(runs: readonly BackendRun[], ingest: IngestResult | undefined, settings: BackendsSettings): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const run of runs.filter((r) => r.backend === 'postgres')) {
    const worst = (kind: Kind, prefix: string) =>
      run.scenarios.filter((s) => s.kind === kind && s.name.startsWith(prefix)).reduce<ScenarioFigures | undefined>((w, s) => (w === undefined || s.sequential.p99 > w.sequential.p99 ? s : w), undefined);
    const list = worst('list', 'list');
    if (list) checks.push({ target: `list p99 ≤ ${TARGETS.listP99} ms`, rows: run.rows, scenario: list.name, measured: list.sequential.p99, limit: TARGETS.listP99, met: list.sequential.p99 <= TARGETS.listP99 });
    const stats = worst('stats', 'stats_30d');
    if (stats) checks.push({ target: `stats last_30_days p99 ≤ ${TARGETS.statsP99} ms`, rows: run.rows, scenario: stats.name, measured: stats.sequential.p99, limit: TARGETS.statsP99, met: stats.sequential.p99 <= TARGETS.statsP99 });
  }
  if (ingest !== undefined) {
    const best = Math.max(0, ...ingest.steps.map((s) => s.sustainedRate));
    checks.push({ target: `ingest ≥ ${TARGETS.ingestPerWriter.toLocaleString('en-US')} events/s per writer`, rows: settings.rows, scenario: 'highest sustained rate', measured: best, limit: TARGETS.ingestPerWriter, met: best >= TARGETS.ingestPerWriter });
  }
  return checks;
}

const ratio = (pg: number, sqlite: number) => (sqlite > 0 ? `${(pg / sqlite).toFixed(1)}×` : 'n/a');
const cpu = (value: number | null) => (value === null ? '–' : fixed(value));

function comparisonTable(runs: readonly BackendRun[], rows: number): BenchOutcome['table'] {
  const sqlite = runs.find((r) => r.backend === 'sqlite' && r.rows === rows);
  const pg = runs.find((r) => r.backend === 'postgres' && r.rows === rows);
  const scale = runs.find((r) => r.backend === 'postgres' && r.rows !== rows);
  const lines: string[][] = [];
  for (const s of sqlite?.scenarios ?? []) {
    const p = pg?.scenarios.find((x) => x.name === s.name);
    if (p === undefined) continue;
    lines.push([
      s.name, rows.toLocaleString('en-US'), fixed(s.sequential.p50), fixed(s.sequential.p99), fixed(p.sequential.p50), fixed(p.sequential.p99),
      ratio(p.sequential.p50, s.sequential.p50), ratio(p.sequential.p99, s.sequential.p99),
      `${Math.round(s.load.reqPerSec)} / ${Math.round(p.load.reqPerSec)}`, `${cpu(s.cpuMsPerRequest.service)} / ${cpu(p.cpuMsPerRequest.service)} + ${cpu(p.cpuMsPerRequest.database)}`,
    ]);
  }
  for (const p of scale?.scenarios ?? []) {
    lines.push([p.name, scale?.rows.toLocaleString('en-US') ?? '', '', '', fixed(p.sequential.p50), fixed(p.sequential.p99), '', '', `– / ${Math.round(p.load.reqPerSec)}`, `– / ${cpu(p.cpuMsPerRequest.service)} + ${cpu(p.cpuMsPerRequest.database)}`]);
  }
  return {
    header: ['scenario', 'rows', 'SQLite p50', 'SQLite p99', 'PG p50', 'PG p99', 'PG÷SQLite p50', 'PG÷SQLite p99', 'req/s SQLite / PG', 'CPU ms/req SQLite / PG svc + db'],
    rows: lines,
  };
}

function markdownTables(runs: readonly BackendRun[], ingest: Partial<Record<Backend, IngestResult>>, settings: BackendsSettings, loadAtStart: readonly number[]): string {
  const table = comparisonTable(runs, settings.rows);
  const md = (header: readonly string[], rows: readonly (readonly string[])[]) =>
    [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  const reads = md(
    ['scenario', 'rows', 'SQLite p50 ms', 'SQLite p99 ms', 'PG p50 ms', 'PG p99 ms', 'PG ÷ SQLite p50', 'PG ÷ SQLite p99', 'req/s (8 conn.) SQLite / PG', 'CPU ms per request: SQLite / PG service + database'],
    table.rows,
  );
  const steps = (['sqlite', 'postgres'] as const).flatMap((backend) =>
    (ingest[backend]?.steps ?? []).map((s) => [
      backend === 'sqlite' ? 'SQLite' : 'PostgreSQL', s.targetRate.toLocaleString('en-US'), s.offeredRate.toLocaleString('en-US'), s.absorbedRate.toLocaleString('en-US'),
      s.caughtUp ? s.catchUpSeconds.toFixed(1) : `> ${s.catchUpSeconds.toFixed(0)}`, s.sustainedRate.toLocaleString('en-US'), String(s.serviceCpuPercent ?? '–'), String(s.databaseCpuPercent ?? '–'),
    ]),
  );
  const writes = md(['backend', 'offered target ev/s', 'offered ev/s', 'absorbed ev/s (window)', 'catch-up s', 'sustained ev/s', 'service CPU %', 'PostgreSQL CPU %'], steps);
  const loads = runs.map((r) => `${r.backend} ${r.rows.toLocaleString('en-US')}: ${r.loadAverageAfter.join(' ')}`).join('; ');
  return [
    `Load average (1, 5, 15 min) at the start: ${loadAtStart.join(' ')}; after each read run: ${loads}.`,
    '',
    reads,
    '',
    `Ingest: one writer (the service watching one simulated cluster of ${settings.ingest.shape.pods.toLocaleString('en-US')} pods), on a copy of the ${settings.rows.toLocaleString('en-US')}-row index, ${settings.ingest.stepSeconds} s per rate.`,
    '',
    writes,
  ].join('\n');
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/backends.ts [--quick] [--skip-scale]`
  runBackendsBench({ quick: process.argv.includes('--quick'), skipScale: process.argv.includes('--skip-scale') }).then(
    (outcome) => {
      console.log(outcome.table.header.join(' | '));
      for (const row of outcome.table.rows) console.log(row.join(' | '));
      for (const note of outcome.notes) console.log(note);
      process.exit(outcome.requestErrors > 0 ? 1 : 0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
