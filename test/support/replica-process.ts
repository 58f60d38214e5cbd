// Replicas of the real service (compiled, as the image runs it: built-service.ts) as child processes,
// for the fault tests: each its own GPUCAP_INSTANCE_ID, all on one PostgreSQL and one (simulated)
// home cluster, as the pods of one Deployment are. A test can SIGKILL one, SIGTERM it and wait for
// its exit, or read its /readyz. Children never outlive the test run (cleanUpOnExit), whatever happens
// to its hooks.
// startHaRig() puts the pieces together: a private PostgreSQL, the simulated cluster, an API token, an
// admin connection for the checks, and the replicas started on them.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { TYPES } from '../../src/store/postgres/connection.js';
import type { Sql } from './event-driver.js';
import { builtServiceEntry } from './built-service.js';
import { cleanUpOnExit, forgetCleanup } from './exit-cleanup.js';
import { freePorts } from './free-port.js';
import { startPostgresOrSkip, type PostgresServer } from './postgres.js';
import { startSimCluster, type SimCluster } from './sim-cluster.js';
import { makeTempDir } from './temp-dir.js';
import { waitFor } from './wait-for.js';

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

export interface ApiCaller {
  token: string;
  organizationId: string;
}

/** An API token file with one ORG_ADMIN token of `organizationId`, shared by every replica. */
export function writeApiTokens(dir: string, organizationId: string): { file: string; admin: ApiCaller } {
  const admin = { token: generateApiToken(), organizationId };
  const file = join(dir, 'tokens.json');
  writeFileSync(file, JSON.stringify({ tokens: [{ id: 'ha-admin', sha256: hashApiToken(admin.token), organization_id: organizationId, role: 'ORG_ADMIN', initiatives: [] }] }));
  return { file, admin };
}

export interface ReplicaOptions {
  instanceId: string;
  dbUrl: string;
  clusterId: string;
  kubeconfigPath: string;
  tokensFile: string;
  /** Where everything the replica prints is appended (its log, kept for a failure's report). */
  logFile: string;
  /** GPUCAP_* settings added to (or replacing) the defaults below. */
  env?: Readonly<Record<string, string>>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Replica {
  instanceId: string;
  url: string;
  adminUrl: string;
  pid: number;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  running(): boolean;
  /** GET /readyz: its status and JSON body (status 0 when the admin port does not answer). */
  readyz(timeoutMs?: number): Promise<{ status: number; body: ReadyzBody | undefined }>;
  /** This replica's own role for the cluster, from /readyz; undefined when it does not answer. */
  role(clusterId: string): Promise<WriterStatus | undefined>;
  signal(name: NodeJS.Signals): void;
  /** SIGTERM, then waits for the exit (SIGKILL after `killAfterMs`, default 20 s). */
  stop(killAfterMs?: number): Promise<Exit>;
  /** CPU seconds (user + system) used so far, from /proc/<pid>/stat; null once it exited. */
  cpuSeconds(): number | null;
  /** The last lines it printed. */
  outputTail(lines?: number): string;
}

export interface WriterStatus {
  clusterId: string;
  role: 'writer' | 'standby' | 'database-unavailable';
  epoch: number | null;
  takeovers: number;
  lastError: string | null;
  holder: { holder: string; epoch: number; heartbeatAgeSeconds: number; snapshotWritten: boolean } | null;
}

export interface ReadyzBody {
  ready: boolean;
  components: { writers: WriterStatus[] };
}

/** Starts a replica and waits until its admin port answers (not until it is ready: see waitReady). */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const [apiPort, adminPort] = await freePorts(2);
  // The developer's GPUCAP_* settings must not leak in.
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('GPUCAP_')) env[name] = value;
  Object.assign(env, {
    GPUCAP_DB_URL: options.dbUrl,
    GPUCAP_INSTANCE_ID: options.instanceId,
    GPUCAP_CLUSTER_ID: options.clusterId,
    GPUCAP_KUBECONFIG: options.kubeconfigPath,
    GPUCAP_HOME_CLUSTER_ENABLED: 'true',
    GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
    GPUCAP_TELEMETRY_ENABLED: 'false',
    GPUCAP_LISTEN: `127.0.0.1:${apiPort}`,
    GPUCAP_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
    GPUCAP_API_TOKENS_FILE: options.tokensFile,
    GPUCAP_RATE_LIMIT_PER_SECOND: '0',
    GPUCAP_AUTH_FAILURE_RATE_PER_SECOND: '0',
    GPUCAP_ADMIN_AUTH: 'none',
    // info: takeovers and losses of the write lock are logged there (and one line per request).
    GPUCAP_LOG_LEVEL: 'info',
    GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
    GPUCAP_SHUTDOWN_GRACE_SECONDS: '5',
    ...options.env,
  });
  const child = spawn(process.execPath, [await builtServiceEntry()], { cwd: REPO_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Cannot start replica "${options.instanceId}": spawn returned no pid`);
  const cleanupKey = `replica:${pid}`;
  cleanUpOnExit(cleanupKey, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    appendFileSync(options.logFile, chunk);
    output.push(chunk.toString('utf8'));
    if (output.length > 400) output.splice(0, output.length - 400);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exit: Exit | null = null;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      forgetCleanup(cleanupKey);
      appendFileSync(options.logFile, `--- ${options.instanceId} exited: code ${code}, signal ${signal} ---\n`);
      resolve(exit);
    });
  });
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const outputTail = (lines = 30) => output.join('').trim().split('\n').slice(-lines).join('\n');

  const readyz = async (timeoutMs = 2_000) => {
    try {
      const response = await fetch(`${adminUrl}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
      return { status: response.status, body: (await response.json()) as ReadyzBody };
    } catch {
      return { status: 0, body: undefined };
    }
  };
  const replica: Replica = {
    instanceId: options.instanceId,
    url: `http://127.0.0.1:${apiPort}`,
    adminUrl,
    pid,
    exited,
    running: () => exit === null,
    readyz,
    role: async (clusterId) => (await readyz()).body?.components.writers.find((w) => w.clusterId === clusterId),
    signal: (name) => {
      if (exit === null) child.kill(name);
    },
    stop: async (killAfterMs = 20_000) => {
      if (exit !== null) return exit;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const result = await exited;
      clearTimeout(killer);
      return result;
    },
    cpuSeconds: () => (exit === null ? readCpuSeconds(pid) : null),
    outputTail,
  };
  try {
    await waitFor(
      async () => {
        if (exit !== null) throw new Error(`it exited (${JSON.stringify(exit)})\n${outputTail()}`);
        return (await fetch(`${adminUrl}/livez`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => 0)) !== 0;
      },
      { what: `replica "${options.instanceId}" to listen`, timeoutMs: 60_000, intervalMs: 100 },
    );
  } catch (error) {
    await replica.stop(2_000);
    throw error;
  }
  return replica;
}

/** Waits until the replica's /readyz answers 200. */
export async function waitReady(replica: Replica, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      if (!replica.running()) throw new Error(`it exited\n${replica.outputTail()}`);
      return (await replica.readyz()).status === 200;
    },
    { what: `replica "${replica.instanceId}" to be ready`, timeoutMs, intervalMs: 100 },
  );
}

/** The replica that says it writes the cluster, with its epoch, once exactly one of them does. */
export async function currentWriter(replicas: readonly Replica[], clusterId: string): Promise<{ replica: Replica; epoch: number } | undefined> {
  const roles = await Promise.all(replicas.filter((r) => r.running()).map(async (replica) => ({ replica, status: await replica.role(clusterId) })));
  const writers = roles.filter((r) => r.status?.role === 'writer');
  const only = writers[0];
  if (writers.length !== 1 || only === undefined) return undefined;
  return { replica: only.replica, epoch: only.status?.epoch ?? 0 };
}

/** utime + stime of /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux). */
export function readCpuSeconds(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface ApiAnswer {
  /** 0 when no answer came: a socket error or the client's timeout (`error` says which). */
  status: number;
  retryAfter: string | null;
  body: string;
  ms: number;
  error?: string;
}

/** GET `path` as `caller`, giving up after `timeoutMs` (a hang counts as no answer). */
export async function apiGet(baseUrl: string, path: string, caller: ApiCaller, timeoutMs = 5_000, headers: Readonly<Record<string, string>> = {}): Promise<ApiAnswer> {
  const started = performance.now();
  try {
    const response = await fetch(baseUrl + path, {
      headers: { ...headers, Authorization: `Bearer ${caller.token}`, 'X-Organization-Id': caller.organizationId },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body, ms: performance.now() - started };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { status: 0, retryAfter: null, body: '', ms: performance.now() - started, error: `${(error as Error).name}: ${(error as Error).message}${cause ? ` (${cause})` : ''}` };
  }
}

/** A JSON body without its request_id, which differs by request. */
export function withoutRequestId(body: string): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    delete parsed.request_id;
    return JSON.stringify(parsed);
  } catch {
    return body;
  }
}

/**
 * `paths` as each replica answers them, compared byte for byte but for the request_id. Returns the
 * differences (path and the replicas that disagree with the first); empty when they agree.
 */
export async function answerDifferences(replicas: readonly Replica[], paths: readonly string[], caller: ApiCaller): Promise<string[]> {
  const differences: string[] = [];
  for (const path of paths) {
    const answers = await Promise.all(
      replicas.map(async (replica) => {
        const answer = await apiGet(replica.url, path, caller);
        return { replica, answer: { ...answer, body: withoutRequestId(answer.body) } };
      }),
    );
    const first = answers[0];
    if (first === undefined) continue;
    if (first.answer.status !== 200) differences.push(`${path}: ${first.replica.instanceId} answered ${first.answer.status} ${first.answer.body.slice(0, 200)}`);
    for (const { replica, answer } of answers.slice(1)) {
      if (answer.status !== first.answer.status || answer.body !== first.answer.body) {
        differences.push(`${path}: ${replica.instanceId} answered ${answer.status} ${answer.body.slice(0, 300)}\n  but ${first.replica.instanceId} ${first.answer.status} ${first.answer.body.slice(0, 300)}`);
      }
    }
  }
  return differences;
}

export interface HaRig {
  dir: string;
  postgres: PostgresServer;
  sim: SimCluster;
  clusterId: string;
  admin: ApiCaller;
  /** Queries on one admin connection to the service's database, opened again after a break. */
  sql: Sql;
  /** Every replica started, running or not. */
  replicas: Replica[];
  /** Starts a replica on the rig's database (or `dbUrl`, e.g. through a proxy) and cluster. */
  start(instanceId: string, options?: { dbUrl?: string; env?: Record<string, string> }): Promise<Replica>;
  running(): Replica[];
  /** The last lines of every replica's log, for a failure's report. */
  logTails(lines?: number): string;
  close(): Promise<void>;
}

export async function startHaRig(context: Mocha.Context, options: { clusterId?: string; prepare?: (sim: SimCluster) => void } = {}): Promise<HaRig> {
  const postgres = await startPostgresOrSkip(context);
  const temp = makeTempDir('gpucap-ha-');
  const clusterId = options.clusterId ?? 'gpu-east';
  const sim = await startSimCluster(temp.path, clusterId);
  options.prepare?.(sim);
  const tokens = writeApiTokens(temp.path, 'acme');
  let client: pg.Client | null = null;
  const sql: Sql = async (text, params = []) => {
    if (client === null) {
      const fresh = new pg.Client({ connectionString: postgres.url, types: TYPES, connectionTimeoutMillis: 3_000, query_timeout: 30_000 });
      fresh.on('error', () => {
        if (client === fresh) client = null;
      });
      await fresh.connect();
      client = fresh;
    }
    const current = client;
    try {
      return await current.query(text, params);
    } catch (error) {
      // A broken connection is opened again on the next call; a failed statement keeps it.
      if ((error as { code?: unknown }).code === undefined && client === current) {
        client = null;
        void current.end().catch(() => undefined);
      }
      throw error;
    }
  };
  const replicas: Replica[] = [];
  // HA_TEST_LOG_DIR keeps the replicas' logs after the run (a CI artifact, or for a look at a pass).
  const logDir = process.env.HA_TEST_LOG_DIR ?? temp.path;
  mkdirSync(logDir, { recursive: true });
  const logFile = (instanceId: string) => join(logDir, `${instanceId}.log`);
  return {
    dir: temp.path,
    postgres,
    sim,
    clusterId,
    admin: tokens.admin,
    sql,
    replicas,
    start: async (instanceId, startOptions = {}) => {
      const replica = await startReplica({
        instanceId,
        dbUrl: startOptions.dbUrl ?? postgres.url,
        clusterId,
        kubeconfigPath: sim.kubeconfigPath,
        tokensFile: tokens.file,
        logFile: logFile(instanceId),
        env: startOptions.env,
      });
      replicas.push(replica);
      return replica;
    },
    running: () => replicas.filter((r) => r.running()),
    logTails: (lines = 40) =>
      [...new Set(replicas.map((r) => r.instanceId))]
        .map((id) => {
          const log = existsSync(logFile(id)) ? readFileSync(logFile(id), 'utf8').trim().split('\n') : [];
          return `--- ${id} ---\n${log.slice(-lines).map((line) => line.slice(0, 600)).join('\n')}`;
        })
        .join('\n'),
    close: async () => {
      await Promise.all(replicas.map((r) => r.stop(5_000)));
      const open = client as pg.Client | null;
      await open?.end().catch(() => undefined);
      await sim.close();
      await postgres.stop();
      temp.remove();
    },
  };
}

/**
 * About 20 list, get, stats and ranking requests whose answers depend on the index alone once every
 * workload finished (no running row accrues GPU-hours with the clock): stats over a fixed custom
 * window `[from, to)`, pages of lists (a second page through the first replica's cursor), rankings,
 * and single workloads.
 */
export async function comparedPaths(first: Replica, caller: ApiCaller, options: { from: number; to: number; workloadIds: readonly string[] }): Promise<string[]> {
  const window = `time_range=custom&start_date=${new Date(options.from).toISOString()}&end_date=${new Date(options.to).toISOString()}`;
  const paths = [
    '/v1/workloads?limit=100',
    '/v1/workloads?limit=100&status=completed',
    '/v1/workloads?limit=100&status=failed',
    '/v1/workloads?limit=100&status=cancelled',
    '/v1/workloads?limit=50&initiative_id=llm',
    '/v1/workloads?limit=50&initiative_id=vision&status=completed',
    '/v1/workloads?limit=50&submitted_by=alice',
    '/v1/workloads?limit=50&is_managed=true',
    `/v1/workloads/stats?${window}`,
    `/v1/workloads/stats?${window}&group_by=initiative_id`,
    `/v1/workloads/stats?${window}&group_by=submitted_by`,
    `/v1/workloads/stats?${window}&group_by=instance_type`,
    `/v1/workloads/stats?${window}&initiative_id=llm`,
    '/v1/workloads/metrics?sort_by=gpu_hours&limit=20',
    '/v1/workloads/metrics?sort_by=gpu_hours&limit=20&order=asc',
    '/v1/workloads/metrics?sort_by=gpu_hours&limit=10&status=failed',
    '/v1/workloads/metrics?sort_by=gpu_hours&limit=10&initiative_id=vision',
    '/v1/capacity',
    ...options.workloadIds.map((id) => `/v1/workloads/${id}`),
  ];
  const firstPage = await apiGet(first.url, '/v1/workloads?limit=25', caller);
  const token = (JSON.parse(firstPage.body || '{}') as { metadata?: { next_token?: string } }).metadata?.next_token;
  if (token !== undefined) paths.push(`/v1/workloads?limit=25&next_token=${token}`);
  return paths;
}
