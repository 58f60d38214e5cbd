// Starts the full-scale benchmark's exporter fleet (full-scale-fleet-process.ts) in a child process,
// from the exporters the simulated clusters announced, and hands back the port they share.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, REPO_DIR } from './environment.js';
import { PLAN_VARIABLE, type FleetPlan, type FullScaleFleetFailed, type FullScaleFleetReady } from './full-scale-fleet-protocol.js';
import { readCpuSeconds } from './service-process.js';

export interface FullScaleFleet extends Omit<FullScaleFleetReady, 'type'> {
  pid: number;
  /** Spawn → every exporter listening and warm (ms). */
  startupMs: number;
  cpuSeconds(): number | null;
  rssBytes(): number | null;
  stop(): Promise<void>;
}

export async function startFullScaleFleet(plan: FleetPlan, options: { workDir: string; timeoutMs?: number }): Promise<FullScaleFleet> {
  const planFile = join(options.workDir, 'exporter-fleet.json');
  writeFileSync(planFile, JSON.stringify(plan));
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, 'lib', 'full-scale-fleet-process.ts')], {
    cwd: REPO_DIR,
    env: { ...process.env, [PLAN_VARIABLE]: planFile },
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
  const timeoutMs = options.timeoutMs ?? 180_000;
  let ready: FullScaleFleetReady;
  try {
    ready = await new Promise<FullScaleFleetReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      child.once('exit', (code, signal) => reject(new Error(`it exited (code ${code}, signal ${signal})`)));
      child.once('message', (message: FullScaleFleetReady | FullScaleFleetFailed) => {
        clearTimeout(timer);
        if (message.type === 'ready') resolve(message);
        else reject(new Error(message.message));
      });
    });
  } catch (error) {
    await stop();
    throw new Error(`Cannot start the exporter fleet: ${(error as Error).message}`, { cause: error });
  }
  const { type: _type, ...described } = ready;
  return { ...described, pid, startupMs: performance.now() - started, cpuSeconds: () => readCpuSeconds(pid), rssBytes: () => readRssBytes(pid), stop };
}

function readRssBytes(pid: number): number | null {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return null;
  }
}
