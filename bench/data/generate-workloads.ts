// Deterministic workload index for benchmarks: N workload rows and their pod intervals, written
// through the real store (the store's writer, on a connection set up for bulk loading) in batches, like
// the indexer would.
// The same (N, GENERATOR_VERSION) always gives the same rows, so generated files are cached under
// bench/.cache/ and reused. Run directly to (re)generate one:
//   npx tsx bench/data/generate-workloads.ts --rows 100000 [--force]
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { PodGpuInterval, WorkloadRecord, WorkloadStatus } from '../../src/domain/workload.js';
import type { FailureReason } from '../../src/domain/failure-reason.js';
import type { LifetimeSave } from '../../src/domain/telemetry.js';
import { SQLITE_MIGRATIONS, SqliteLifetimeStore, migrateSqlite, sqliteWriter } from '../../src/store/tooling.js';
import { mulberry32 } from '../../sim/random.js';
import { isEntryPoint } from '../lib/report/format.js';
import { migrateToServiceSchema } from '../lib/store/service-schema.js';

/** Bump when the distributions or the row shape change: cached files of another version are regenerated. */
export const GENERATOR_VERSION = 5;
export const SEED = 0x6c0ffee;
/**
 * Every generated time is relative to this instant, so a file is the same whenever it is generated.
 * The benchmark runs the service with its clock shifted here (bench/lib/service/shift-clock.ts), so
 * `last_30_days` always covers the same rows however old the cached file is.
 */
export const BENCH_NOW = Date.parse('2026-11-01T00:00:00Z');
export const BATCH_SIZE = 10_000;

const DAY_MS = 86_400_000;
const MAX_AGE_DAYS = 400;
/** age = MAX_AGE × u^AGE_SKEW: ~16% of the rows fall in the last 30 days, ~4% in the last 7. */
const AGE_SKEW = 1.4;

export const CACHE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache');

// --- the population: organizations, initiatives (teams), users -----------------------------------

export interface Initiative {
  id: string;
  weight: number;
  users: string[];
}

export interface Organization {
  id: string;
  share: number;
  initiatives: Initiative[];
}

const INITIATIVE_NAMES: Record<string, string[]> = {
  acme: [
    'llm-pretrain', 'llm-finetune', 'vision', 'recsys', 'llm-eval', 'speech', 'search-ranking', 'ads-ctr',
    'multimodal', 'robotics', 'autonomy-perception', 'autonomy-planning', 'code-assist', 'safety-research',
    'rl-research', 'genomics', 'drug-discovery', 'weather', 'chip-design', 'translation', 'ocr',
    'video-understanding', 'fraud', 'forecasting', 'data-platform', 'support-bot', 'mlops-ci', 'infra-benchmarks',
  ],
  globex: ['gx-nlp', 'gx-vision', 'gx-ranking', 'gx-research', 'gx-speech', 'gx-analytics', 'gx-robotics', 'gx-platform'],
  initech: ['it-ml', 'it-forecast', 'it-vision', 'it-research'],
};
const ORG_SHARES: Record<string, number> = { acme: 0.7, globex: 0.2, initech: 0.1 };
const ORG_USERS: Record<string, number> = { acme: 350, globex: 100, initech: 50 };

const FIRST_NAMES = [
  'ada', 'alan', 'alice', 'amir', 'anna', 'bob', 'carla', 'chen', 'dana', 'diego', 'eve', 'farah', 'grace',
  'hana', 'ivan', 'jin', 'kofi', 'lena', 'maya', 'nils', 'omar', 'priya', 'rosa', 'sven', 'yuki',
];
const LAST_NAMES = [
  'abe', 'berg', 'costa', 'diaz', 'eklund', 'fischer', 'garcia', 'haddad', 'ito', 'jensen', 'kim', 'lopez',
  'mensah', 'novak', 'okafor', 'patel', 'quinn', 'rossi', 'singh', 'tanaka',
];

export const INSTANCE_TYPES: readonly [string, number][] = [
  ['p5.48xlarge', 0.25],
  ['p4d.24xlarge', 0.25],
  ['a3-highgpu-8g', 0.15],
  ['g5.12xlarge', 0.15],
  ['Standard_ND96isr_H100_v5', 0.1],
  ['g6e.xlarge', 0.1],
];
const GPU_COUNTS: readonly [number, number][] = [[1, 0.3], [2, 0.15], [4, 0.15], [8, 0.3], [16, 0.07], [64, 0.03]];
// Issue 7's reference fleet has 4 clusters. Their ids differ from the demo world's (gpu-east, gpu-west),
// which the mixed benchmark runs beside this history: a cluster that relists marks its missing
// unfinished rows cancelled, and must not find these.
const CLUSTERS: readonly [string, number][] = [['prod-us-east', 0.45], ['prod-us-west', 0.3], ['prod-eu', 0.15], ['research', 0.1]];
const TERMINAL: readonly [WorkloadStatus, number][] = [['completed', 0.85], ['failed', 0.1], ['cancelled', 0.05]];
const FAILED_EXIT_CODES = [1, 1, 1, 2, 127, 137, 139];
const RUNNING_SHARE = 0.03;
const PENDING_SHARE = 0.02;

/** The organizations, their initiatives (Zipf-weighted) and users; fixed, whatever N is. */
export function benchPopulation(): Organization[] {
  const random = mulberry32(SEED ^ 0x5eed);
  let userNumber = 0;
  return Object.entries(INITIATIVE_NAMES).map(([orgId, names]) => {
    const initiatives: Initiative[] = names.map((id, rank) => ({ id, weight: 1 / (rank + 1), users: [] }));
    const pick = weightedPicker(initiatives.map((i) => [i, i.weight] as [Initiative, number]));
    for (let n = 0; n < (ORG_USERS[orgId] ?? 0); n += 1) {
      // The first users go one to each initiative, so none is without submitters.
      const home = n < initiatives.length ? initiatives[n] : pick(random());
      const first = FIRST_NAMES[userNumber % FIRST_NAMES.length] ?? 'user';
      const last = LAST_NAMES[Math.floor(userNumber / FIRST_NAMES.length) % LAST_NAMES.length] ?? 'x';
      home?.users.push(`${first}.${last}`);
      userNumber += 1;
    }
    return { id: orgId, share: ORG_SHARES[orgId] ?? 0, initiatives };
  });
}

// --- random helpers ------------------------------------------------------------------------------

/** A picker over weighted items taking a uniform draw in [0, 1). */
export function weightedPicker<T>(items: readonly (readonly [T, number])[]): (u: number) => T {
  const total = items.reduce((sum, [, w]) => sum + w, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const [, w] of items) cumulative.push((acc += w / total));
  return (u) => {
    for (let i = 0; i < cumulative.length; i += 1) {
      if (u < (cumulative[i] ?? 1)) return (items[i] as readonly [T, number])[0];
    }
    return (items[items.length - 1] as readonly [T, number])[0];
  };
}

function uuid(random: () => number): string {
  const hex = () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0');
  const h = hex() + hex() + hex() + hex();
  const variant = '89ab'[Math.floor(random() * 4)] ?? '8';
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function exponential(random: () => number, mean: number): number {
  return -Math.log(1 - random()) * mean;
}

function logNormal(random: () => number, median: number, sigma: number): number {
  // Box-Muller; 1 - u keeps the log argument in (0, 1].
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return median * Math.exp(sigma * z);
}

// --- rows ----------------------------------------------------------------------------------------

interface Generated {
  record: WorkloadRecord;
  pods: PodGpuInterval[];
}

/**
 * Yields the N rows, oldest first (stratified ages, as an indexer would meet them), with their
 * pods. Running and pending rows are recent whatever their position.
 */
/** How failed jobs fail in a large GPU fleet, roughly: mostly their own code, then memory, then the platform. */
const FAILURE_MIX: readonly [FailureReason, number][] = [
  ['nonzero_exit', 0.4], ['oom_killed', 0.22], ['backoff_limit_exceeded', 0.14], ['evicted', 0.08], ['preempted', 0.06],
  ['deadline_exceeded', 0.04], ['node_lost', 0.03], ['gpu_error', 0.02], ['unknown', 0.01],
];

function failureReasonOf(draw: number): FailureReason {
  let left = draw;
  for (const [reason, share] of FAILURE_MIX) {
    if (left < share) return reason;
    left -= share;
  }
  return 'unknown';
}

export function* generateWorkloads(rows: number): Generator<Generated> {
  const random = mulberry32(SEED ^ rows);
  // A stream of its own, so that every other field is what it was before the reasons existed.
  const reasons = mulberry32(SEED ^ rows ^ 0xfa11);
  const population = benchPopulation();
  const pickOrg = weightedPicker(population.map((o) => [o, o.share] as [Organization, number]));
  const initiativePickers = new Map(population.map((o) => [o.id, weightedPicker(o.initiatives.map((i) => [i, i.weight] as [Initiative, number]))]));
  const userPickers = new Map(
    population.flatMap((o) => o.initiatives).map((i) => [i.id, weightedPicker(i.users.map((u, rank) => [u, 1 / (rank + 1) ** 0.8] as [string, number]))]),
  );
  const pickInstance = weightedPicker(INSTANCE_TYPES);
  const pickGpus = weightedPicker(GPU_COUNTS);
  const pickCluster = weightedPicker(CLUSTERS);
  const pickTerminal = weightedPicker(TERMINAL);

  for (let i = 0; i < rows; i += 1) {
    const org = pickOrg(random());
    const initiative = (initiativePickers.get(org.id) as (u: number) => Initiative)(random());
    const submittedBy = (userPickers.get(initiative.id) as (u: number) => string)(random());
    const kind = random() < 0.85 ? 'Job' : 'Pod';
    const gpuCount = pickGpus(random());
    const roll = random();
    const status: WorkloadStatus = roll < RUNNING_SHARE ? 'running' : roll < RUNNING_SHARE + PENDING_SHARE ? 'pending' : pickTerminal(random());

    let ageMs: number;
    if (status === 'running') ageMs = 7 * DAY_MS * random() ** 2;
    else if (status === 'pending') ageMs = 2 * DAY_MS * random() ** 2;
    else ageMs = MAX_AGE_DAYS * DAY_MS * ((rows - i - random()) / rows) ** AGE_SKEW;
    const submittedAt = Math.floor(BENCH_NOW - ageMs);

    let startedAt: number | null = null;
    let completedAt: number | null = null;
    let exitCode: number | null = null;
    if (status !== 'pending' && !(status === 'cancelled' && random() < 0.3)) {
      startedAt = Math.floor(submittedAt + Math.min(exponential(random, 180_000), ageMs / 2));
    }
    if (status === 'completed' || status === 'failed' || status === 'cancelled') {
      const begin = startedAt ?? submittedAt;
      let duration = Math.min(Math.max(logNormal(random, 40 * 60_000, 1.6), 30_000), 14 * DAY_MS);
      if (begin + duration > BENCH_NOW) duration = (BENCH_NOW - begin) * random();
      completedAt = Math.floor(begin + duration);
      exitCode = status === 'completed' ? 0 : status === 'failed' ? (FAILED_EXIT_CODES[Math.floor(random() * FAILED_EXIT_CODES.length)] ?? 1) : startedAt === null ? 0 : 143;
    }

    const workloadId = uuid(random);
    const record: WorkloadRecord = {
      workloadId,
      organizationId: org.id,
      clusterId: pickCluster(random()),
      namespace: initiative.id,
      name: `${initiative.id}-${kind === 'Job' ? 'job' : 'pod'}-${i.toString(36)}`,
      kind,
      status,
      submittedBy,
      initiativeId: initiative.id,
      instanceType: pickInstance(random()),
      gpuCount,
      submittedAt,
      startedAt,
      completedAt,
      exitCode,
      failureReason: status === 'failed' ? failureReasonOf(reasons()) : status === 'cancelled' ? 'deleted' : null,
      isManaged: random() < 0.6,
      resourceVersion: String(100_000 + i),
    };
    yield { record, pods: podIntervals(record, random) };
  }
}

/** Share of the started workloads of the last 30 days with GPU samples (the others predate the exporters, or ran where none answered). */
const USAGE_SHARE = 0.7;
const SCRAPE_SECONDS = 15;

/**
 * What the GPUs of the recent started workloads did, saved through the real lifetime store (its
 * triggers keep the usage rollup): utilization spread over 0–100 %, a fifth of the workloads mostly
 * idle, power from 60 to 700 W, over 80–100 % of their GPU-time. Deterministic, like the rows.
 */
function writeUsage(db: Database.Database, log: (line: string) => void): number {
  const random = mulberry32(SEED ^ 0x05a9e);
  const lifetimes = new SqliteLifetimeStore(db);
  const candidates = db.prepare(`SELECT workload_id, gpu_seconds_closed + open_gpus * (COALESCE(completed_at, @now) / 1000.0) - open_gpu_start_sum AS gpu_seconds
    FROM workloads WHERE submitted_at >= @from AND started_at IS NOT NULL ORDER BY workload_id`).all({ now: BENCH_NOW, from: BENCH_NOW - 30 * DAY_MS }) as { workload_id: string; gpu_seconds: number }[];
  let batch: LifetimeSave[] = [];
  let saved = 0;
  for (const { workload_id: workloadId, gpu_seconds: gpuSeconds } of candidates) {
    if (random() >= USAGE_SHARE || gpuSeconds < SCRAPE_SECONDS) continue;
    const samples = Math.floor((gpuSeconds * (0.8 + 0.2 * random())) / SCRAPE_SECONDS);
    const utilSeconds = samples * SCRAPE_SECONDS;
    const idle = random() < 0.2;
    const util = idle ? Math.floor(random() * 400) : 500 + Math.floor(random() * 9500);
    const power = 600 + Math.floor(random() * 6400);
    const idleSeconds = idle ? Math.floor(utilSeconds * (0.6 + 0.4 * random()) / 60) * 60 : 0;
    batch.push({ workloadId, totals: {}, usage: { utilSeconds, utilWeighted: util * utilSeconds, idleSeconds, powerSeconds: utilSeconds, energyDj: power * utilSeconds, gpuErrors: 0 } });
    if (batch.length >= BATCH_SIZE) {
      lifetimes.saveLifetimes(batch);
      saved += batch.length;
      batch = [];
    }
  }
  lifetimes.saveLifetimes(batch);
  saved += batch.length;
  if (saved === 0) log('  no workload with usage');
  return saved;
}

/** Jobs run 1–3 pods one after the other (retries); the last one is open while the workload runs. */
function podIntervals(record: WorkloadRecord, random: () => number): PodGpuInterval[] {
  const podUid = (n: number) => `${record.workloadId.slice(0, 24)}${n.toString(16).padStart(12, '0')}`;
  if (record.startedAt === null) {
    // A pending workload has an unscheduled pod; one cancelled before it started has none left.
    return record.status === 'pending' ? [{ podUid: podUid(0), workloadId: record.workloadId, gpus: record.gpuCount, startedAt: null, finishedAt: null }] : [];
  }
  const roll = random();
  const count = record.kind === 'Pod' ? 1 : roll < 0.8 ? 1 : roll < 0.95 ? 2 : 3;
  const end = record.completedAt ?? BENCH_NOW;
  const pods: PodGpuInterval[] = [];
  let from = record.startedAt;
  for (let n = 0; n < count; n += 1) {
    const last = n === count - 1;
    const to = last ? end : Math.floor(from + (end - from) * (0.1 + 0.4 * random()));
    pods.push({
      podUid: podUid(n),
      workloadId: record.workloadId,
      gpus: record.gpuCount,
      startedAt: from,
      finishedAt: last && record.completedAt === null ? null : to,
    });
    from = Math.min(to + 5_000, end); // a retry starts a few seconds after the failed pod
  }
  return pods;
}

// --- writing and caching ---------------------------------------------------------------------------

export interface DatasetInfo {
  generatorVersion: number;
  schemaDigest: string;
  seed: number;
  benchNow: string;
  rows: number;
  podIntervals: number;
  fileBytes: number;
  generatedAt: string;
  /** Seconds spent writing rows and pods through the store (without the final checkpoint). */
  ingestSeconds: number;
  /** The rollup migration after the rows were written (generator version 3 only). */
  rollupSeconds?: number;
  rowsPerSecond: number;
  podIntervalsPerSecond: number;
  byStatus: Record<string, number>;
  byOrganization: Record<string, number>;
  lastThirtyDaysRows: number;
  /** [rows written, seconds of writing so far] every tenth: shows the rate falling as the file outgrows the page cache. */
  progress: [number, number][];
}

export interface Dataset {
  path: string;
  info: DatasetInfo;
  /** True when the file came from the cache, false when it was generated by this call. */
  cached: boolean;
}

/**
 * Digest of the schema's SQL (every migration). A file made under another schema is not reused: the
 * service would not migrate it (same user_version) and would meet tables and indexes it does not expect.
 */
export function schemaDigest(): string {
  return createHash('sha256').update(JSON.stringify(SQLITE_MIGRATIONS)).digest('hex').slice(0, 10);
}

export function cachedDatasetPath(rows: number): string {
  return join(CACHE_DIR, `workloads-g${GENERATOR_VERSION}-s${schemaDigest()}-n${rows}.db`);
}

/** Removes cached files for N rows made by another generator version or schema (each is large). */
function removeStaleDatasets(rows: number, keep: string, log: (line: string) => void): void {
  if (!existsSync(CACHE_DIR)) return;
  for (const name of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (new RegExp(`^workloads-.*-n${rows}\\.db`).test(name) && !path.startsWith(keep)) {
      rmSync(path, { force: true });
      log(`  removed stale ${path}`);
    }
  }
}

/** The cached file for N rows, generated first when missing, stale or `force`d. */
export async function ensureWorkloadsDb(rows: number, options: { force?: boolean; log?: (line: string) => void } = {}): Promise<Dataset> {
  const log = options.log ?? (() => undefined);
  const path = cachedDatasetPath(rows);
  const metaPath = `${path}.json`;
  if (!options.force && existsSync(path) && existsSync(metaPath)) {
    const info = JSON.parse(readFileSync(metaPath, 'utf8')) as DatasetInfo;
    if (info.generatorVersion === GENERATOR_VERSION && info.schemaDigest === schemaDigest() && info.rows === rows && statSync(path).size === info.fileBytes) {
      log(`dataset ${rows.toLocaleString('en-US')} rows: cached ${path} (generated ${info.generatedAt} in ${info.ingestSeconds.toFixed(1)} s)`);
      return { path, info, cached: true };
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  removeStaleDatasets(rows, path, log);
  log(`dataset ${rows.toLocaleString('en-US')} rows: generating ${path}`);
  const info = await writeWorkloadsDb(rows, path, log);
  writeFileSync(metaPath, `${JSON.stringify(info, null, 2)}\n`);
  return { path, info, cached: false };
}

/** Generates N rows into a new SQLite file at `path` (replaced atomically); returns what was written. */
export async function writeWorkloadsDb(rows: number, path: string, log: (line: string) => void = () => undefined): Promise<DatasetInfo> {
  const temporary = `${path}.partial`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(temporary + suffix, { force: true });
  // The rows go in at the latest schema, the writer keeping the rollups per batch as the service
  // does. (Before schema v5 they went in at v2 and the v3 migration built the rollups in one pass,
  // because v3's triggers updated four rollups per row: 212 s for 1M rows. The v5 column cannot be
  // written at v2, and the writer's per-batch rollups do not need the detour.)
  // The connection is set up as the service's open does, except that a bench file is rebuilt, never
  // recovered (no fsync), and that its page cache holds the whole file. It migrates the new file
  // itself: a first open by the service's own code would leave the same schema, but one more
  // change counted in the file's header.
  const db = new Database(temporary);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('foreign_keys = ON');
  db.pragma('cache_size = -2097152');
  db.pragma('temp_store = MEMORY');
  migrateSqlite(db);
  const store = sqliteWriter(db, { clock: { now: () => BENCH_NOW } });
  const byStatus: Record<string, number> = {};
  const byOrganization: Record<string, number> = {};
  let lastThirtyDaysRows = 0;
  let podCount = 0;
  let records: WorkloadRecord[] = [];
  let pods: PodGpuInterval[] = [];
  let writeMs = 0;
  let nextReport = Math.max(BATCH_SIZE, Math.floor(rows / 10));
  let written = 0;
  const progress: [number, number][] = [];

  const flush = async ()  => {
    const started = performance.now();
    await store.upsertWorkloads(records);
    await store.upsertPodIntervals(pods);
    writeMs += performance.now() - started;
    written += records.length;
    podCount += pods.length;
    records = [];
    pods = [];
    if (written >= nextReport || written === rows) {
      const [previousRows, previousSeconds] = progress.at(-1) ?? [0, 0];
      progress.push([written, Math.round(writeMs) / 1000]);
      const recent = (written - previousRows) / (writeMs / 1000 - previousSeconds);
      log(`  ${written.toLocaleString('en-US')} / ${rows.toLocaleString('en-US')} rows: ${Math.round(written / (writeMs / 1000)).toLocaleString('en-US')} rows/s overall, ` +
        `${Math.round(recent).toLocaleString('en-US')} rows/s for the last ${(written - previousRows).toLocaleString('en-US')}`);
      nextReport += Math.max(BATCH_SIZE, Math.floor(rows / 10));
    }
  };

  try {
    for (const { record, pods: recordPods } of generateWorkloads(rows)) {
      records.push(record);
      pods.push(...recordPods);
      byStatus[record.status] = (byStatus[record.status] ?? 0) + 1;
      byOrganization[record.organizationId] = (byOrganization[record.organizationId] ?? 0) + 1;
      if (record.submittedAt >= BENCH_NOW - 30 * DAY_MS) lastThirtyDaysRows += 1;
      if (records.length >= BATCH_SIZE) await flush();
    }
    if (records.length > 0) await flush();
    const started = performance.now();
    const usageRows = writeUsage(db, log);
    log(`  usage of ${usageRows.toLocaleString('en-US')} workloads saved in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  // The service's own open: settings, and a schema it needs no migration for.
  await migrateToServiceSchema({ kind: 'sqlite', path: temporary }, { now: BENCH_NOW });
  for (const suffix of ['-wal', '-shm']) rmSync(temporary + suffix, { force: true });
  renameSync(temporary, path);
  const ingestSeconds = writeMs / 1000;
  return {
    generatorVersion: GENERATOR_VERSION,
    schemaDigest: schemaDigest(),
    seed: SEED,
    benchNow: new Date(BENCH_NOW).toISOString(),
    rows,
    podIntervals: podCount,
    fileBytes: statSync(path).size,
    generatedAt: new Date().toISOString(),
    ingestSeconds,
    rowsPerSecond: Math.round(rows / ingestSeconds),
    podIntervalsPerSecond: Math.round(podCount / ingestSeconds),
    byStatus,
    byOrganization,
    lastThirtyDaysRows,
    progress,
  };
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const rowsArg = args[args.indexOf('--rows') + 1];
  const rows = args.includes('--rows') && rowsArg !== undefined ? Number(rowsArg) : 100_000;
  if (!Number.isSafeInteger(rows) || rows < 1) {
    console.error(`Cannot generate: "--rows" must be a positive integer, got "${rowsArg ?? ''}"`);
    process.exit(2);
  }
  const dataset = await ensureWorkloadsDb(rows, { force: args.includes('--force'), log: (line) => console.log(line) });
  console.log(JSON.stringify(dataset.info, null, 2));
}
