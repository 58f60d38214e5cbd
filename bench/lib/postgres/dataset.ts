// The benchmark's generated workload index on PostgreSQL: the very rows of bench/data/generate-workloads.ts
// (same generator, seed and N as the SQLite file), in a private server of scripts/postgres/start.sh whose
// folder is cached under bench/.cache/, keyed by the generator version and a digest of PostgreSQL's
// schema, so that a rerun starts the server on it instead of loading again (10M rows take a while).
//
// Loading goes around the writer on purpose, as `gpucap migrate` does: every column as arrays through
// unnest in chunks (src/cli/migrate/chunk-writer.ts, the migrator's own writes), the GPU aggregates
// computed here from the pods as the writer's REFRESH_AGGREGATES does (whole GPU-ms summed, then
// divided), and the rollups rebuilt from the rows at the end (rollup-rebuild.ts). The database that
// holds the rows is a template: a run that writes (ingest) works on a copy (CREATE DATABASE … TEMPLATE,
// as test/support/postgres-database.ts gives each test its own), and the cached rows stay as generated.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import { POSTGRES_MIGRATIONS, connectMaintenance, ensurePartitions, rebuildRollups, toRow } from '../../../src/store/tooling.js';
import { chunkWriter } from '../../../src/cli/migrate/chunk-writer.js';
import type { SourcePod, SourceWorkload } from '../../../src/cli/migrate/source.js';
import { cleanUpOnExit, forgetCleanup, readEnvFile, signal } from '../../../test/support/exit-cleanup.js';
import { databaseUrl } from '../../../test/support/postgres-database.js';
import { POSTGRES_INSTALL_HINT } from '../../../test/support/postgres.js';
import { BENCH_NOW, CACHE_DIR, GENERATOR_VERSION, generateWorkloads } from '../../data/generate-workloads.js';
import { REPO_DIR } from '../report/environment.js';
import { migrateToServiceSchema } from '../store/service-schema.js';

const run = promisify(execFile);
const CHUNK = 5_000;
const LOGGER = { warn: (fields: object, message: string) => console.warn(`postgres: ${message} ${JSON.stringify(fields)}`) };

export interface PostgresDatasetInfo {
  generatorVersion: number;
  schemaDigest: string;
  rows: number;
  podIntervals: number;
  generatedAt: string;
  loadSeconds: number;
  rollupSeconds: number;
  vacuumSeconds: number;
  rowsPerSecond: number;
  /** pg_database_size of the loaded database. */
  databaseBytes: number;
}

export interface PostgresDataset {
  /** The server's folder under bench/.cache (start.sh's DIR). */
  dir: string;
  /** The server's `gpucap` database: the generated rows. */
  url: string;
  info: PostgresDatasetInfo;
  cached: boolean;
  /** Server settings that shape the figures (shared_buffers, work_mem, …). */
  settings: Record<string, string>;
  /** CPU seconds the server has used so far: the postmaster, its live processes and those it reaped. */
  cpuSeconds(): number | null;
  /** A copy of the rows for a run that writes; drop it after. */
  copy(name: string): Promise<{ url: string; drop(): Promise<void> }>;
  stop(): Promise<void>;
}

/**
 * Digest of the schema the rows were loaded under (version 1: the tables and their indexes). Later
 * versions only ever get appended: a cached folder is brought up to date by migrate() at its start, as
 * a service's start would do, rather than loaded again.
 */
export function postgresSchemaDigest(): string {
  return createHash('sha256').update(JSON.stringify(POSTGRES_MIGRATIONS.filter((m) => m.version === 1))).digest('hex').slice(0, 10);
}

function datasetDir(rows: number): string {
  return join(CACHE_DIR, `postgres-g${GENERATOR_VERSION}-s${postgresSchemaDigest()}-n${rows}`);
}

/** Cached server folders for N rows of another generator version or schema (each is large). */
function removeStale(rows: number, keep: string, log: (line: string) => void): void {
  if (!existsSync(CACHE_DIR)) return;
  for (const name of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (new RegExp(`^postgres-.*-n${rows}$`).test(name) && path !== keep) {
      rmSync(path, { recursive: true, force: true });
      log(`  removed stale ${path}`);
    }
  }
}

async function script(name: 'start.sh' | 'stop.sh', dir: string, ...args: string[]): Promise<void> {
  try {
    await run('bash', [join(REPO_DIR, 'scripts', 'postgres', name), dir, ...args], { timeout: 600_000 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`scripts/postgres/${name} failed in "${dir}": ${stderr || (error as Error).message}`, { cause: error });
  }
}

function postmasterPid(dir: string): string | undefined {
  const file = join(dir, 'data', 'postmaster.pid');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n')[0] : undefined;
}

/** utime, stime, cutime and cstime of /proc/<pid>/stat in seconds, and the parent pid. */
function procTimes(pid: string): { ppid: string; own: number; reaped: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces): state, ppid, …, utime (14th field) onwards.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = (i: number) => Number(fields[i] ?? 0) / 100;
  return { ppid: fields[1] ?? '', own: ticks(11) + ticks(12), reaped: ticks(13) + ticks(14) };
}

function serverCpuSeconds(postmaster: string | undefined): number | null {
  if (postmaster === undefined) return null;
  const root = procTimes(postmaster);
  if (root === null) return null;
  let total = root.own + root.reaped;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    const times = procTimes(pid);
    if (times?.ppid === postmaster) total += times.own;
  }
  return total;
}

/** Starts the cached server for N rows, loading the rows first when they are missing or stale. */
export async function ensurePostgresDataset(rows: number, options: { log?: (line: string) => void; force?: boolean } = {}): Promise<PostgresDataset> {
  const log = options.log ?? (() => undefined);
  if ((process.env.PG_BIN ?? '') === '') throw new Error(`The backends benchmark needs PostgreSQL: ${POSTGRES_INSTALL_HINT}`);
  const dir = datasetDir(rows);
  const metaPath = join(dir, 'dataset.json');
  let info: PostgresDatasetInfo | undefined;
  if (!options.force && existsSync(metaPath)) info = JSON.parse(readFileSync(metaPath, 'utf8')) as PostgresDatasetInfo;
  const cached = info !== undefined && info.generatorVersion === GENERATOR_VERSION && info.schemaDigest === postgresSchemaDigest() && info.rows === rows;
  if (!cached) {
    mkdirSync(CACHE_DIR, { recursive: true });
    removeStale(rows, dir, log);
    rmSync(dir, { recursive: true, force: true });
  }
  // Whatever happens, the server does not outlive this process (its folder stays: it is the cache).
  cleanUpOnExit(dir, () => signal(postmasterPid(dir), 'SIGQUIT'));
  await script('start.sh', dir);
  const url = readEnvFile(dir).PG_URL ?? '';
  const stop = async () => {
    await script('stop.sh', dir, 'fast').catch(() => signal(postmasterPid(dir), 'SIGQUIT'));
    forgetCleanup(dir);
  };
  try {
    if (!cached) {
      log(`postgres dataset ${rows.toLocaleString('en-US')} rows: loading into ${dir}`);
      info = await loadRows(url, rows, log);
      writeFileSync(metaPath, `${JSON.stringify(info, null, 2)}\n`);
    } else {
      log(`postgres dataset ${rows.toLocaleString('en-US')} rows: cached ${dir} (loaded ${info?.generatedAt} in ${info?.loadSeconds.toFixed(0)} s)`);
    }
    await migrateToServiceSchema({ kind: 'postgres', url, readUrl: undefined }, { now: BENCH_NOW });
    const settings = await serverSettings(url);
    let copies = 0;
    return {
      dir,
      url,
      info: info as PostgresDatasetInfo,
      cached,
      settings,
      cpuSeconds: () => serverCpuSeconds(postmasterPid(dir)),
      copy: async (name: string) => {
        const copyName = `${name}_${process.pid}_${++copies}`;
        await admin(url, `CREATE DATABASE ${copyName} TEMPLATE gpucap`);
        return { url: databaseUrl(url, copyName), drop: () => admin(url, `DROP DATABASE IF EXISTS ${copyName} WITH (FORCE)`) };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One statement on the server's `postgres` database (a template cannot be copied from a session inside it). */
async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl(url, 'postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function serverSettings(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('server_version', 'shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost', 'fsync', 'synchronous_commit', 'jit', 'max_parallel_workers_per_gather')`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.unit === null ? r.setting : `${r.setting} × ${r.unit}`]));
  } finally {
    await client.end();
  }
}

/** A workload's GPU aggregates from its pods, as the writer's REFRESH_AGGREGATES computes them. */
function aggregates(pods: readonly PodGpuInterval[]): Pick<SourceWorkload, 'gpu_seconds_closed' | 'open_gpus' | 'open_gpu_start_sum'> {
  let closedMs = 0;
  let openGpus = 0;
  let openStartMs = 0;
  for (const pod of pods) {
    if (pod.startedAt === null) continue;
    if (pod.finishedAt !== null) closedMs += pod.gpus * Math.max(0, pod.finishedAt - pod.startedAt);
    else {
      openGpus += pod.gpus;
      openStartMs += pod.gpus * pod.startedAt;
    }
  }
  return { gpu_seconds_closed: closedMs / 1000, open_gpus: openGpus, open_gpu_start_sum: openStartMs / 1000 };
}

async function loadRows(url: string, rows: number, log: (line: string) => void): Promise<PostgresDatasetInfo> {
  // The clock of the benchmark's services: the partitions of BENCH_NOW's month and the two after it.
  await migrateToServiceSchema({ kind: 'postgres', url, readUrl: undefined }, { now: BENCH_NOW });
  const client = await connectMaintenance(url, { instanceId: 'bench-loader', logger: LOGGER });
  try {
    await client.query('SET synchronous_commit = off');
    // The secondary indexes are dropped for the load and built again after it, as pg_indexes defines
    // them (the migration's own text): one sorted build instead of 13 B-tree inserts per row.
    const { rows: secondary } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
       WHERE i.schemaname = 'public' AND i.tablename IN ('workloads', 'workload_pods')
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    );
    for (const index of secondary) await client.query(`DROP INDEX ${index.indexname}`);
    const known = new Set<number>();
    let workloads: SourceWorkload[] = [];
    let pods: SourcePod[] = [];
    let podCount = 0;
    let written = 0;
    const started = performance.now();
    let nextReport = Math.max(CHUNK, Math.floor(rows / 10));
    const flush = async () => {
      await ensurePartitions(client, workloads.map((w) => w.submitted_at), { known });
      await chunkWriter.workloads(client, workloads, 'insert');
      await chunkWriter.pods(client, pods, 'insert');
      written += workloads.length;
      podCount += pods.length;
      workloads = [];
      pods = [];
      if (written >= nextReport || written === rows) {
        const seconds = (performance.now() - started) / 1000;
        log(`  ${written.toLocaleString('en-US')} / ${rows.toLocaleString('en-US')} rows in ${seconds.toFixed(0)} s (${Math.round(written / seconds).toLocaleString('en-US')} rows/s)`);
        nextReport += Math.max(CHUNK, Math.floor(rows / 10));
      }
    };
    for (const { record, pods: recordPods } of generateWorkloads(rows)) {
      workloads.push(sourceRow(record, recordPods));
      for (const pod of recordPods) {
        pods.push({ pod_uid: pod.podUid, workload_id: pod.workloadId, submitted_at: record.submittedAt, gpus: pod.gpus, started_at: pod.startedAt, finished_at: pod.finishedAt });
      }
      if (workloads.length >= CHUNK) await flush();
    }
    if (workloads.length > 0) await flush();
    await client.query(`SET maintenance_work_mem = '256MB'`);
    // pg_indexes gives a partitioned table's index as `ON ONLY` the parent, which would leave the
    // partitions without it: built on the parent, it is built on every partition.
    for (const index of secondary) await client.query(index.indexdef.replace(' ON ONLY ', ' ON '));
    const loadSeconds = (performance.now() - started) / 1000;
    log(`  ${secondary.length} secondary indexes built again; ${loadSeconds.toFixed(0)} s in all`);
    let at = performance.now();
    await rebuildRollups(client);
    const rollupSeconds = (performance.now() - at) / 1000;
    log(`  rollups rebuilt from the rows in ${rollupSeconds.toFixed(1)} s`);
    at = performance.now();
    // What autovacuum would do over time: hint bits, the visibility map (index-only scans) and statistics.
    await client.query('VACUUM (ANALYZE)');
    const vacuumSeconds = (performance.now() - at) / 1000;
    log(`  VACUUM (ANALYZE) in ${vacuumSeconds.toFixed(1)} s`);
    const { rows: size } = await client.query<{ bytes: number }>('SELECT pg_database_size(current_database())::float8 AS bytes');
    return {
      generatorVersion: GENERATOR_VERSION,
      schemaDigest: postgresSchemaDigest(),
      rows,
      podIntervals: podCount,
      generatedAt: new Date().toISOString(),
      loadSeconds: Math.round(loadSeconds * 10) / 10,
      rollupSeconds: Math.round(rollupSeconds * 10) / 10,
      vacuumSeconds: Math.round(vacuumSeconds * 10) / 10,
      rowsPerSecond: Math.round(rows / loadSeconds),
      databaseBytes: size[0]?.bytes ?? 0,
    };
  } finally {
    await client.end();
  }
}

function sourceRow(record: WorkloadRecord, pods: readonly PodGpuInterval[]): SourceWorkload {
  return { ...toRow(record), ...aggregates(pods), updated_at: BENCH_NOW };
}
