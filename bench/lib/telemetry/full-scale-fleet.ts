// Starts the full-scale benchmark's exporter fleet (full-scale-fleet-process.ts) in a child process,
// from the exporters the simulated clusters announced, and hands back the port they share.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startIpcChild } from './ipc-child.js';
import { PLAN_VARIABLE, type FleetPlan, type FullScaleFleetReady } from './full-scale-fleet-protocol.js';

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
  const child = await startIpcChild<FullScaleFleetReady>(new URL('./full-scale-fleet-process.ts', import.meta.url), {
    what: 'the exporter fleet',
    env: { [PLAN_VARIABLE]: planFile },
    timeoutMs: options.timeoutMs ?? 180_000,
  });
  const { type: _type, ...described } = child.ready;
  return { ...described, pid: child.pid, startupMs: child.startupMs, cpuSeconds: child.cpuSeconds, rssBytes: child.rssBytes, stop: child.stop };
}
