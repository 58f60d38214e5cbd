// Starts the simulated exporter fleet (fleet-process.ts) in a child process and hands back
// where its exporters listen: one shared port, one loopback address per node, in plan order.
import type { FleetReady } from './fleet-process.js';
import { startIpcChild } from './ipc-child.js';

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
  const child = await startIpcChild<FleetReady>(new URL('./fleet-process.ts', import.meta.url), {
    what: `the exporter fleet of ${options.nodes} nodes`,
    env: { BENCH_FLEET_NODES: String(options.nodes), BENCH_FLEET_BIG_JOB_NODES: String(options.bigJobNodes), BENCH_FLEET_IP_BASE: IP_BASE },
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  return {
    pid: child.pid,
    port: child.ready.port,
    ips: new Map(child.ready.exporters.map((e) => [e.hostname, e.ip])),
    startupMs: child.startupMs,
    cpuSeconds: child.cpuSeconds,
    rssBytes: child.rssBytes,
    stop: child.stop,
  };
}
