// A Prometheus server (Debian's package, fetched by bench/tools/ensure-prometheus.sh) run as a child
// process for the side-by-side benchmark: a generated configuration, its TSDB in a temporary folder
// removed at stop, listening on a free loopback port. The dcgm-exporter targets come from a file_sd
// file, written empty at start and filled by setDcgmTargets(), so its memory can be read once ready
// and before it holds any series.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { BENCH_DIR } from '../report/environment.js';
import { parseMetrics } from '../service/metrics-text.js';
import { freePort, readCpuSeconds, readRssBytes } from '../service/service-process.js';

const execFileAsync = promisify(execFile);

/** Where the binary is, or why there is none: the benchmark is then skipped, not failed. */
export type PrometheusBinary = { ok: true; path: string; version: string } | { ok: false; reason: string };

export async function ensurePrometheusBinary(): Promise<PrometheusBinary> {
  const script = join(BENCH_DIR, 'tools', 'ensure-prometheus.sh');
  let path: string;
  try {
    const { stdout } = await execFileAsync('bash', [script], { timeout: 180_000, maxBuffer: 1 << 20 });
    path = stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    return { ok: false, reason: (stderr ?? '').trim() || message };
  }
  try {
    const { stdout, stderr } = await execFileAsync(path, ['--version'], { timeout: 10_000 });
    const version = /version (\S+)/.exec(stdout + stderr)?.[1] ?? 'unknown';
    return { ok: true, path, version };
  } catch (error) {
    return { ok: false, reason: `${path} --version failed: ${(error as Error).message}` };
  }
}

export interface PrometheusOptions {
  binary: string;
  intervalSeconds: number;
  /** host:port of the kube-state-metrics stand-in, scraped at the same interval. */
  kubeStateMetrics: string;
  readyTimeoutMs?: number;
}

export interface PrometheusServer {
  pid: number;
  url: string;
  flags: string[];
  config: unknown;
  /** Replaces the dcgm-exporter targets (host:port each); Prometheus reloads file_sd files on change. */
  setDcgmTargets(targets: readonly string[]): void;
  /** VmRSS of the process (bytes), from /proc. */
  rssBytes(): number | null;
  cpuSeconds(): number | null;
  /** Prometheus' own metrics (its /metrics), by name; labelled series summed. */
  selfMetrics(names: readonly string[]): Promise<Record<string, number>>;
  /** An instant query through the HTTP API; throws on an error answer. */
  query(expression: string, time: number): Promise<InstantSample[]>;
  /** Prometheus' own account of one evaluation (`stats=all`): timings in seconds and samples read. */
  queryStats(expression: string, time: number): Promise<Record<string, unknown>>;
  /** The last lines Prometheus logged (for error reports). */
  logTail(): string;
  stop(): Promise<void>;
}

export interface InstantSample {
  metric: Record<string, string>;
  value: number;
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gpucap-prometheus-bench-'));
  const targetsFile = join(dir, 'dcgm-targets.json');
  const configFile = join(dir, 'prometheus.json');
  const logFile = join(dir, 'prometheus.log');
  const writeTargets = (targets: readonly string[]) => {
    // Written aside and renamed: the file watcher must never read a half-written file.
    writeFileSync(`${targetsFile}.tmp`, JSON.stringify([{ targets, labels: {} }]));
    renameSync(`${targetsFile}.tmp`, targetsFile);
  };
  writeTargets([]);
  const interval = `${options.intervalSeconds}s`;
  const config = {
    global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: '1m' },
    scrape_configs: [
      // Every target on one loopback port, as dcgm-exporter pods on their pod IPs; file_sd stands in
      // for the Kubernetes service discovery a cluster would use (it would add the exporter pod's own
      // labels, which the queries do not need).
      // Relative to the configuration's folder, so the results do not name this run's temporary folder.
      { job_name: 'dcgm-exporter', file_sd_configs: [{ files: [basename(targetsFile)] }] },
      // kube-state-metrics' labels (namespace, pod) describe the pods it reports on: kept, as its
      // usual scrape configuration does.
      { job_name: 'kube-state-metrics', honor_labels: true, static_configs: [{ targets: [options.kubeStateMetrics] }] },
    ],
  };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const port = await freePort();
  const flags = [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${join(dir, 'tsdb')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // Longer than the benchmark; nothing is compacted or deleted while it runs (head block: 2 h).
    '--storage.tsdb.retention.time=1d',
    // The Debian defaults point at /etc/prometheus; the HTTP API needs none of the console files.
    `--web.console.templates=${join(dir, 'consoles')}`,
    `--web.console.libraries=${join(dir, 'console_libraries')}`,
    '--log.level=warn',
  ];
  const log = openSync(logFile, 'a');
  const child = spawn(options.binary, flags, { cwd: dir, stdio: ['ignore', log, log] });
  closeSync(log);
  const pid = child.pid;
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Should this process end without stop() (process.exit() after a crash), Prometheus goes with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const logTail = () => {
    try {
      return readFileSync(logFile, 'utf8').trim().split('\n').slice(-5).join('\n');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  if (pid === undefined) {
    await stop();
    throw new Error('Cannot start Prometheus: spawn returned no pid');
  }
  try {
    await waitReady(url, child, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    const tail = logTail();
    await stop();
    throw new Error(`Prometheus did not become ready: ${(error as Error).message}${tail ? ` (log: ${tail})` : ''}`, { cause: error });
  }
  return {
    pid,
    url,
    flags,
    config,
    setDcgmTargets: writeTargets,
    rssBytes: () => readRssBytes(pid),
    cpuSeconds: () => readCpuSeconds(pid),
    async selfMetrics(names) {
      const response = await fetch(`${url}/metrics`);
      const series = parseMetrics(await response.text());
      const result: Record<string, number> = {};
      for (const name of names) result[name] = series.filter((s) => s.name === name).reduce((sum, s) => sum + s.value, 0);
      return result;
    },
    async query(expression, time) {
      const response = await fetch(`${url}${queryPath(expression, time)}`);
      const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success' || body.data === undefined) throw new Error(`Prometheus rejected the query (HTTP ${response.status}): ${body.error ?? 'no data'}: ${expression}`);
      if (body.data.resultType !== 'vector') throw new Error(`Prometheus answered a ${body.data.resultType}, expected a vector: ${expression}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async queryStats(expression, time) {
      const response = await fetch(`${url}${queryPath(expression, time)}&stats=all`);
      const body = (await response.json()) as { data?: { stats?: Record<string, unknown> } };
      return body.data?.stats ?? {};
    },
    logTail,
    stop,
  };
}

/** The GET path of an instant query evaluated at `time` (ms): the same text the latency runs send. */
export function queryPath(expression: string, time: number): string {
  return `/api/v1/query?${new URLSearchParams({ query: expression, time: (time / 1000).toFixed(3) }).toString()}`;
}

async function waitReady(url: string, child: ReturnType<typeof spawn>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`it exited (code ${child.exitCode}, signal ${child.signalCode})`);
    try {
      const response = await fetch(`${url}/-/ready`);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(200);
  }
  throw new Error(`not ready within ${timeoutMs / 1000} s`);
}
