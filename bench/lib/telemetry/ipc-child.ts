// A helper process of a benchmark (an exporter fleet, say) started with an IPC channel, both sides of
// its handshake: the child sends `{ type: 'ready', … }` once it serves, or `{ type: 'failed', message }`;
// the parent sends `{ type: 'stop' }`, and the child also stops when the parent goes away. Started
// apart from the measured service so that its work never shares the service's event loop.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPO_DIR } from '../report/environment.js';
import { readCpuSeconds, readRssBytes } from '../service/service-process.js';

export interface ChildFailed {
  type: 'failed';
  message: string;
}

export interface IpcChild<Ready> {
  pid: number;
  ready: Ready;
  /** Spawn → ready (ms). */
  startupMs: number;
  /** CPU seconds (user + system) the child has used so far, from /proc; null off Linux. */
  cpuSeconds(): number | null;
  /** Resident set size of the child (bytes), from /proc; null off Linux. */
  rssBytes(): number | null;
  stop(): Promise<void>;
}

/** Starts `script` (a module's URL) under tsx with `env` added, and resolves once it is ready. `what` names it in errors. */
export async function startIpcChild<Ready extends { type: 'ready' }>(
  script: URL,
  options: { what: string; env: Record<string, string>; timeoutMs: number },
): Promise<IpcChild<Ready>> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(script)], {
    cwd: REPO_DIR,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Cannot start ${options.what}: spawn returned no pid`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send({ type: 'stop' });
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  let ready: Ready;
  try {
    ready = await new Promise<Ready>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs / 1000} s`)), options.timeoutMs);
      child.once('exit', (code, signal) => reject(new Error(`it exited (code ${code}, signal ${signal})`)));
      child.once('message', (message: Ready | ChildFailed) => {
        clearTimeout(timer);
        if (message.type === 'ready') resolve(message as Ready);
        else reject(new Error((message as ChildFailed).message));
      });
    });
  } catch (error) {
    await stop();
    throw new Error(`Cannot start ${options.what}: ${(error as Error).message}`, { cause: error });
  }
  return { pid, ready, startupMs: performance.now() - started, cpuSeconds: () => readCpuSeconds(pid), rssBytes: () => readRssBytes(pid), stop };
}

/**
 * The child's side: runs `start`, sends what it resolves to as ready (or its failure), and calls
 * `close` then exits on `stop` or when the parent goes away. `close` must cope with a half-done start.
 */
export function serveIpcChild<Ready extends { type: 'ready' }>(what: string, start: () => Promise<Ready>, close: () => Promise<void>): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error(`Cannot run ${what}: it must be started with an IPC channel (bench/lib/telemetry/ipc-child.ts)`);
  const stop = async () => {
    await close();
    process.exit(0);
  };
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') void stop();
  });
  process.on('disconnect', () => void stop());
  start().then(
    (ready) => send(ready),
    async (error: unknown) => {
      const failed: ChildFailed = { type: 'failed', message: error instanceof Error ? error.message : String(error) };
      send(failed);
      await stop();
    },
  );
}

/** One gzip scrape of a simulated exporter, which renders and compresses its payload into its cache. */
export async function warmExporter(url: string): Promise<void> {
  const response = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`Simulated exporter ${url} answered HTTP ${response.status} to its warm-up scrape`);
}
