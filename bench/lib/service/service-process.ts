// Runs the real service (src/main.ts) in a child process, so the load generator in this process does
// not share its event loop: GPUCAP_* settings, an API token file with an ORG_ADMIN and a TEAM_LEAD
// token, ports picked here (port 0 would not be discoverable from outside), health polled until 200
// (or, for a service that must first sync a cluster, only until the admin port answers).
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiToken, hashApiToken } from '../../../src/auth/token-format.js';
import { freePort, freePorts } from '../../../test/support/free-port.js';
import { investigationEnv, REPO_DIR } from '../report/environment.js';

export { freePort };

export interface Caller {
  token: string;
  organizationId: string;
}

export interface ServiceProcess {
  url: string;
  /** The admin port (/livez, /readyz, /metrics). */
  adminUrl: string;
  pid: number;
  /** performance.now() when the child was spawned: the origin of startup times. */
  spawnedAt: number;
  callers: { admin: Caller; lead: Caller };
  /** Milliseconds from spawn to the first 200 of /v1/health (or of /livez with `waitFor: 'admin'`). */
  startupMs: number;
  /** CPU seconds (user + system) the child has used so far, from /proc/<pid>/stat; null off Linux. */
  cpuSeconds(): number | null;
  /** VmHWM, VmRSS, RssAnon and RssFile of the child (bytes), from /proc/<pid>/status; null off Linux. */
  memory(): ProcessMemory | null;
  /** The last lines the service printed (warnings and errors: it runs at log level warn). */
  outputTail(): string;
  /** Heap after two full collections (needs `heapProbe: true`); null without it or off Linux. */
  heapAfterGc(): Promise<HeapFigures | null>;
  stop(): Promise<void>;
}

/** process.memoryUsage() of the service right after two forced full collections. */
export interface HeapFigures {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface ProcessMemory {
  peakRssBytes: number;
  rssBytes: number;
  rssAnonBytes: number;
  rssFileBytes: number;
}

export interface ServiceOptions {
  dbPath: string;
  /** Folder for the token file (and nothing else). */
  workDir: string;
  organizationId: string;
  /** Initiatives of the TEAM_LEAD token. */
  leadInitiatives: readonly string[];
  /** Where the service's clock should stand at its start (epoch ms); undefined: the real time. */
  clockAt?: number;
  /** Extra node flags for the service, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] to profile it. */
  nodeArgs?: readonly string[];
  /** GPUCAP_* settings added to (or replacing) the defaults below. */
  env?: Readonly<Record<string, string>>;
  /**
   * 'health' (default): until /v1/health answers 200, i.e. the service is ready. 'admin': until /livez
   * answers, i.e. it listens; readiness (a cluster's sync) is then the caller's to measure.
   */
  waitFor?: 'health' | 'admin';
  /** How long to wait for that (default 60 s). */
  startTimeoutMs?: number;
  /** Also append everything the service prints to this file (e.g. with nodeArgs ['--trace-gc']). */
  outputFile?: string;
  /** Preload bench/lib/service/heap-probe.ts (and --expose-gc) so heapAfterGc() can read the retained heap. */
  heapProbe?: boolean;
}

// Preloaded into the service: they sit beside this file.
const SHIFT_CLOCK = new URL('./shift-clock.ts', import.meta.url).href;
const HEAP_PROBE = new URL('./heap-probe.ts', import.meta.url).href;

export async function startServiceProcess(options: ServiceOptions): Promise<ServiceProcess> {
  const { callers, tokensFile } = writeTokensFile(options);
  const [apiPort, adminPort] = await freePorts(2);
  const env = serviceEnv(options, { apiPort, adminPort, tokensFile });
  const heapFile = join(options.workDir, `heap-${apiPort}.json`);
  if (options.heapProbe === true) env['BENCH_HEAP_FILE'] = heapFile;
  const heapProbe = options.heapProbe === true ? ['--expose-gc', '--import', HEAP_PROBE] : [];
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', '--import', SHIFT_CLOCK, ...heapProbe, 'src/main.ts'], {
    cwd: REPO_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const outputTail = keepOutput(child, options.outputFile);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('Cannot start the service: spawn returned no pid');

  const url = `http://127.0.0.1:${apiPort}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  try {
    const probe = options.waitFor === 'admin' ? `${adminUrl}/livez` : `${url}/v1/health`;
    await waitForOk(probe, () => exited, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await stopChild(child, exit);
    throw new Error(`Cannot start the service: ${(error as Error).message}\n--- service output ---\n${outputTail()}`, { cause: error });
  }
  const startupMs = performance.now() - started;

  return {
    url,
    adminUrl,
    pid,
    spawnedAt: started,
    callers,
    startupMs,
    memory: () => readMemory(pid),
    cpuSeconds: () => readCpuSeconds(pid),
    outputTail,
    heapAfterGc: () => (options.heapProbe === true && exited === null ? readHeapAfterGc(child, heapFile) : Promise.resolve(null)),
    async stop() {
      if (exited !== null) {
        const { code, signal } = exited as { code: number | null; signal: NodeJS.Signals | null };
        throw new Error(`The service exited during the benchmark (code ${code}, signal ${signal})\n--- service output ---\n${outputTail()}`);
      }
      await stopChild(child, exit);
    },
  };
}

/** An ORG_ADMIN and a TEAM_LEAD API token, and the tokens file the service reads them from. */
function writeTokensFile(options: ServiceOptions): { callers: ServiceProcess['callers']; tokensFile: string } {
  const callers = {
    admin: { token: generateApiToken(), organizationId: options.organizationId },
    lead: { token: generateApiToken(), organizationId: options.organizationId },
  };
  const tokensFile = join(options.workDir, 'tokens.json');
  writeFileSync(
    tokensFile,
    JSON.stringify({
      tokens: [
        { id: 'bench-admin', sha256: hashApiToken(callers.admin.token), organization_id: options.organizationId, role: 'ORG_ADMIN' },
        { id: 'bench-lead', sha256: hashApiToken(callers.lead.token), organization_id: options.organizationId, role: 'TEAM_LEAD', initiatives: [...options.leadInitiatives] },
      ],
    }),
  );
  return { callers, tokensFile };
}

function serviceEnv(options: ServiceOptions, at: { apiPort: number; adminPort: number; tokensFile: string }): Record<string, string> {
  // Settings of the developer's shell (GPUCAP_CONFIG, a stray GPUCAP_LISTEN) must not leak in.
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('GPUCAP_')) env[name] = value;
  return Object.assign(env, {
    GPUCAP_DB_PATH: options.dbPath,
    GPUCAP_LISTEN: `127.0.0.1:${at.apiPort}`,
    GPUCAP_ADMIN_LISTEN: `127.0.0.1:${at.adminPort}`,
    GPUCAP_API_TOKENS_FILE: at.tokensFile,
    GPUCAP_RATE_LIMIT_PER_SECOND: '0',
    GPUCAP_AUTH_FAILURE_RATE_PER_SECOND: '0',
    GPUCAP_ADMIN_AUTH: 'none',
    GPUCAP_LOG_LEVEL: 'warn',
    GPUCAP_SHUTDOWN_GRACE_SECONDS: '1',
    // Retention must not delete rows of the generated history while it is measured.
    GPUCAP_RETENTION_DAYS: '36500',
    // The home cluster is watched by default; a benchmark of a pre-generated index watches none.
    GPUCAP_HOME_CLUSTER_ENABLED: 'false',
    GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
    BENCH_CLOCK_OFFSET_MS: String(options.clockAt === undefined ? 0 : options.clockAt - Date.now()),
    ...options.env,
    ...investigationEnv(),
  });
}

/** Keeps the last 200 chunks the service prints (and all of it in `outputFile`); returns their last 20 lines on demand. */
function keepOutput(child: ChildProcess, outputFile: string | undefined): () => string {
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    if (outputFile !== undefined) appendFileSync(outputFile, chunk);
    output.push(chunk.toString('utf8'));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => output.join('').trim().split('\n').slice(-20).join('\n');
}

/** Signals the heap probe and waits (up to 120 s: a full collection of a big heap on a busy machine) for its answer. */
async function readHeapAfterGc(child: ChildProcess, file: string): Promise<HeapFigures | null> {
  const previous = readHeapFile(file)?.sequence ?? 0;
  child.kill('SIGUSR2');
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const figures = readHeapFile(file);
    if (figures !== null && figures.sequence > previous) {
      const { sequence: _sequence, ...heap } = figures;
      return heap;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
}

function readHeapFile(file: string): (HeapFigures & { sequence: number }) | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as HeapFigures & { sequence: number };
  } catch {
    return null;
  }
}

async function waitForOk(url: string, exited: () => unknown, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const path = new URL(url).pathname;
  let last = 'no answer yet';
  while (performance.now() < deadline) {
    if (exited() !== null) throw new Error(`it exited before ${path} answered 200`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${path} did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`);
}

async function stopChild(child: ChildProcess, exit: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exit;
  clearTimeout(killer);
}

function readMemory(pid: number): ProcessMemory | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { peakRssBytes: kib('VmHWM'), rssBytes: kib('VmRSS'), rssAnonBytes: kib('RssAnon'), rssFileBytes: kib('RssFile') };
}

/** Resident set size of a process (bytes), from /proc; null off Linux or once it is gone. */
export function readRssBytes(pid: number): number | null {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return null;
  }
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

