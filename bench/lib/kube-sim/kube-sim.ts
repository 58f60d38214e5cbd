// Starts one simulated cluster, and its churn driver, in a child process (kube-sim-process.ts) and hands
// back what the benchmark needs of it: its kubeconfig, what it holds, rows to spot-check, churn on
// command, and the CPU it uses. The lag probe stays with the caller: it reads the service's API.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPO_DIR } from '../report/environment.js';
import { round } from '../report/format.js';
import { readCpuSeconds } from '../service/service-process.js';
import {
  SETTINGS_VARIABLE,
  type ChurnCommand,
  type ChurnReport,
  type ChurnSample,
  type FromSim,
  type KubeSimSettings,
  type SimReady,
  type SimStatus,
  type ToSim,
} from './kube-sim-protocol.js';

export interface KubeSim extends Omit<SimReady, 'type'> {
  clusterName: string;
  pid: number;
  /** Spawn → ready: generating, seeding and listening (ms). */
  startupMs: number;
  /**
   * Churns at `rate` for `seconds`; `onSample` gets each sampled change as the child makes it (its `at`
   * is epoch ms), and the promise the child's report. Rejects when a pool of the churn ran dry.
   */
  churn(command: Omit<ChurnCommand, 'type'>, onSample?: (sample: ChurnSample) => void): Promise<ChurnReport>;
  status(): Promise<SimStatus>;
  /** CPU seconds (user + system) the child has used so far, from /proc; null off Linux or once it exited. */
  cpuSeconds(): number | null;
  stop(): Promise<void>;
}

export interface DriverFigures {
  clusterId: string;
  pid: number;
  targetRate: number;
  offeredRate: number;
  emitted: number;
  /** The driver's own churn loop, which offeredRate is over. */
  windowSeconds: number;
  /** CPU of the driver's process during its window (churn, watch writes, bookmarks): seconds and % of one core. */
  cpuSeconds: number;
  cpuPercent: number;
  maxWatchBufferedBytes: number;
}

/** What one driver's report says, as the results files record it. */
export function driverFigures(sim: KubeSim, targetRate: number, report: ChurnReport): DriverFigures {
  return {
    clusterId: sim.clusterName,
    pid: sim.pid,
    targetRate,
    offeredRate: Math.round(report.offeredRate),
    emitted: report.emitted,
    windowSeconds: round(report.windowSeconds),
    cpuSeconds: round(report.cpuSeconds),
    cpuPercent: Math.round((report.cpuSeconds / report.windowSeconds) * 100),
    maxWatchBufferedBytes: report.maxWatchBufferedBytes,
  };
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

export interface KubeSimOptions {
  timeoutMs?: number;
  /** Node flags for the child, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] to see where the driver's time goes. */
  nodeArgs?: readonly string[];
  /**
   * The child's nice value (default 0). A real cluster's API servers run on other machines: with a
   * positive value the service under test is served first and the simulated clusters take what it
   * leaves of the cores, which their reports then show.
   */
  niceness?: number;
}

const CHILD_ENTRY = fileURLToPath(new URL('./kube-sim-process.ts', import.meta.url));

export async function startKubeSim(settings: KubeSimSettings, options: KubeSimOptions = {}): Promise<KubeSim> {
  const started = performance.now();
  const child = spawnKubeSim(settings, options);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Cannot start simulated cluster ${settings.clusterName}: spawn returned no pid`);
  const what = `simulated cluster ${settings.clusterName} (pid ${pid})`;
  const channel = new SimChannel(child, what);
  let ready: SimReady;
  try {
    ready = await channel.ready(options.timeoutMs ?? 300_000);
  } catch (error) {
    await channel.stop();
    throw new Error(`Cannot start ${what}: ${(error as Error).message}`, { cause: error });
  }
  const { type: _type, ...described } = ready;

  return {
    ...described,
    clusterName: settings.clusterName,
    pid,
    startupMs: performance.now() - started,
    churn: (churn, onSample) => channel.churn(churn, onSample),
    status: () => channel.status(),
    cpuSeconds: () => (channel.exitError === undefined ? readCpuSeconds(pid) : null),
    stop: () => channel.stop(),
  };
}

function spawnKubeSim(settings: KubeSimSettings, options: KubeSimOptions): ChildProcess {
  const nodeCommand = [process.execPath, ...(options.nodeArgs ?? []), '--import', 'tsx', CHILD_ENTRY];
  // Through nice(1), not setpriority() after the spawn: on Linux the value is per thread, and node starts
  // its GC and I/O threads before this process could reach them; under nice they inherit it.
  const niced = options.niceness !== undefined && options.niceness !== 0 ? ['nice', '-n', String(options.niceness)] : [];
  const [file, ...args] = [...niced, ...nodeCommand] as [string, ...string[]];
  return spawn(file, args, {
    cwd: REPO_DIR,
    env: { ...process.env, [SETTINGS_VARIABLE]: JSON.stringify(settings) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The IPC channel to one simulated cluster: each message of the child goes to whoever waits for it, and its exit fails them all. */
class SimChannel {
  exitError: Error | undefined;
  private readyWaiter: Waiter<SimReady> | undefined;
  private churnWaiter: (Waiter<ChurnReport> & { onSample?: (sample: ChurnSample) => void }) | undefined;
  // The child answers status requests in the order they came.
  private readonly statusWaiters: Waiter<SimStatus>[] = [];
  private readonly exited: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    private readonly what: string,
  ) {
    child.on('message', (message: FromSim) => this.receive(message));
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitError = new Error(`${what} exited (code ${code}, signal ${signal})`);
        this.failAll(this.exitError);
        resolve();
      });
    });
  }

  ready(timeoutMs: number): Promise<SimReady> {
    return new Promise<SimReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      this.readyWaiter = {
        resolve: (value) => {
          clearTimeout(timer);
          this.readyWaiter = undefined;
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  churn(churn: Omit<ChurnCommand, 'type'>, onSample?: (sample: ChurnSample) => void): Promise<ChurnReport> {
    return new Promise<ChurnReport>((resolve, reject) => {
      if (this.churnWaiter !== undefined) return reject(new Error(`${this.what} is already churning`));
      this.churnWaiter = { resolve, reject, onSample };
      try {
        this.command({ type: 'churn', ...churn });
      } catch (error) {
        this.churnWaiter = undefined;
        reject(error as Error);
      }
    });
  }

  status(): Promise<SimStatus> {
    return new Promise<SimStatus>((resolve, reject) => {
      try {
        this.command({ type: 'status' });
        this.statusWaiters.push({ resolve, reject });
      } catch (error) {
        reject(error as Error);
      }
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send({ type: 'stop' } satisfies ToSim);
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(killer);
  }

  private receive(message: FromSim): void {
    if (message.type === 'ready') this.readyWaiter?.resolve(message);
    else if (message.type === 'failed') this.failAll(new Error(`${this.what} failed: ${message.message}`));
    else if (message.type === 'sample') this.churnWaiter?.onSample?.(message);
    else if (message.type === 'churned') {
      const waiter = this.churnWaiter;
      this.churnWaiter = undefined;
      if (message.error === undefined) waiter?.resolve(message);
      else waiter?.reject(new Error(`${this.what}: ${message.error}`));
    } else if (message.type === 'status') this.statusWaiters.shift()?.resolve(message);
  }

  private command(message: ToSim): void {
    if (this.exitError !== undefined) throw this.exitError;
    this.child.send(message);
  }

  private failAll(error: Error): void {
    this.readyWaiter?.reject(error);
    this.churnWaiter?.reject(error);
    for (const waiter of this.statusWaiters.splice(0)) waiter.reject(error);
    this.readyWaiter = undefined;
    this.churnWaiter = undefined;
  }
}

/** Starts every cluster at once (they generate in parallel); if one fails, stops the others and throws. */
export async function startKubeSims(settings: readonly KubeSimSettings[], options: KubeSimOptions = {}): Promise<KubeSim[]> {
  const outcomes = await Promise.allSettled(settings.map((s) => startKubeSim(s, options)));
  const sims = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(sims.map((sim) => sim.stop()));
    throw failed.reason;
  }
  return sims;
}
