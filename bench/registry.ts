// Every benchmark of `npm run bench`, in the order they run, with the rows of issue 7's table each one
// measures (each row has its results file, bench/results/<row>.json). A new benchmark registers here.
import { runBackendsBench } from './backends.js';
import { runCostBench } from './cost.js';
import { runFleetBench } from './fleet.js';
import { runFullScaleBench } from './full-scale.js';
import { runKubeApiserverBench } from './kube-apiserver.js';
import { runMixedBench } from './mixed.js';
import { runParseBench } from './parse.js';
import { runPrometheusBench } from './prometheus.js';
import { runSyncIngestBench } from './sync-ingest.js';
import { runTelemetryBench } from './telemetry.js';
import { runTelemetryHaBench } from './telemetry-ha.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { runWorkloadsApiBench } from './workloads-api.js';

export interface BenchDefinition {
  name: string;
  /** The rows of issue 7's table it measures: each writes bench/results/<row>.json. */
  rows: readonly string[];
  run(options: { quick: boolean }): Promise<BenchOutcome>;
  /**
   * Its full run is too long for `npm run bench` (15 minutes for all of them): it runs only when named
   * (`--only NAME`). Its --quick run stays in `npm run bench -- --quick`, the smoke check.
   */
  onlyWhenNamed?: boolean;
}

/** The two that need the 1M-row index come last: on a fresh clone the first of them generates it, and they share it. */
export const BENCHES: readonly BenchDefinition[] = [
  { name: 'parse', rows: ['parse'], run: (options) => runParseBench(options) },
  { name: 'telemetry', rows: ['rings', 'metrics', 'ranking'], run: (options) => runTelemetryBench(options) },
  { name: 'telemetry-ha', rows: ['telemetry-ha'], run: (options) => runTelemetryHaBench(options) },
  { name: 'prometheus', rows: ['prometheus'], run: (options) => runPrometheusBench(options) },
  { name: 'sync-ingest', rows: ['sync', 'ingest'], run: (options) => runSyncIngestBench(options) },
  { name: 'kube-apiserver', rows: ['kube-apiserver'], run: (options) => runKubeApiserverBench(options) },
  // Issue 39: GET /v1/fleet (30 days of history) and /v1/fleet/nodes at 1,250 nodes × 8 GPUs; its own small index.
  { name: 'fleet', rows: ['fleet'], run: (options) => runFleetBench(options) },
  { name: 'workloads-api', rows: ['list', 'get', 'stats'], run: (options) => runWorkloadsApiBench(options) },
  // Issue 40: statistics with cost, the ranking by cost and the month's chargeback, on workloads-api's 1M-row index.
  { name: 'cost', rows: ['cost'], run: (options) => runCostBench(options) },
  { name: 'mixed', rows: ['mixed'], run: (options) => runMixedBench(options) },
  { name: 'backends', rows: ['backends'], run: (options) => runBackendsBench(options) },
  // Issue 17: 1M rows, 150k pods and 10,000 GPUs in one process; several minutes on its own.
  { name: 'full-scale', rows: ['full-scale'], run: (options) => runFullScaleBench(options), onlyWhenNamed: true },
];

