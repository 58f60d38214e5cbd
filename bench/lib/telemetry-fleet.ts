// Starts the simulated exporter fleet (telemetry-fleet-process.ts) in a child process and hands back
// where its exporters listen: one shared port, one loopback address per node, in plan order.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, REPO_DIR } from './environment.js';
import type { FleetFailed, FleetReady } from './telemetry-fleet-process.js';

export interface FleetProcess {
  pid: number;
  port: number;
  /** Exporter address by node hostname. */
  ips: Map<string, string>;
  /** Spawn → every exporter listening (ms). */
  startupMs: number;
  /** CPU seconds (user + system) the child has used so far, from /proc; null off Linux. */
  cpuSeconds(): number | null;
  /** Resident set size of the child (bytes), from /proc; null off Linux. */
  rssBytes(): number | null;
  stop(): Promise<void>;
}

/** First address of the fleet: away from 127.0.1.x, which the tests' fleets start from. */
const IP_BASE = '127.0.100.1';

export async function startFleetProcess(options: { nodes: number; bigJobNodes: number; timeoutMs?: number }): Promise<FleetProcess> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, 'lib', 'telemetry-fleet-process.ts')], {
    cwd: REPO_DIR,
    env: { ...process.env, BENCH_FLEET_NODES: String(options.nodes), BENCH_FLEET_BIG_JOB_NODES: String(options.bigJobNodes), BENCH_FLEET_IP_BASE: IP_BASE },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('Cannot start the exporter fleet: spawn returned no pid');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send({ type: 'stop' });
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  const timeoutMs = options.timeoutMs ?? 120_000;
  let ready: FleetReady;
  try {
    ready = await new Promise<FleetReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      child.once('exit', (code, signal) => reject(new Error(`it exited (code ${code}, signal ${signal})`)));
      child.once('message', (message: FleetReady | FleetFailed) => {
        clearTimeout(timer);
        if (message.type === 'ready') resolve(message);
        else reject(new Error(message.message));
      });
    });
  } catch (error) {
    await stop();
    throw new Error(`Cannot start the exporter fleet of ${options.nodes} nodes: ${(error as Error).message}`, { cause: error });
  }
  return {
    pid,
    port: ready.port,
    ips: new Map(ready.exporters.map((e) => [e.hostname, e.ip])),
    startupMs: performance.now() - started,
    cpuSeconds: () => readCpuSeconds(pid),
    rssBytes: () => readRssBytes(pid),
    stop,
  };
}

/** utime + stime of /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux). */
function readCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function readRssBytes(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return null;
  }
}
