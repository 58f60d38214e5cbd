// What the full-scale benchmark and its exporter fleet's child process (full-scale-fleet-process.ts)
// exchange: the plan, as a JSON file named by an environment variable (too big for the variable
// itself), then the ready message over ipc-child.ts's handshake.
import type { ExporterNode } from './full-scale-exporters.js';

export const PLAN_VARIABLE = 'BENCH_FULL_SCALE_FLEET_PLAN';

export interface FleetPlan {
  /** Per simulated cluster, the first exporter address and its nodes' exporters, in address order. */
  clusters: { ipBase: string; nodes: ExporterNode[] }[];
}

export interface FullScaleFleetReady {
  type: 'ready';
  port: number;
  exporters: number;
  gpus: number;
  /** GPUs whose exporter names a pod, by the plan. */
  attributedGpus: number;
}
