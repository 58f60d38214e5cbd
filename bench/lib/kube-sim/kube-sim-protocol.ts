// The messages between a benchmark and one simulated cluster in its child process (kube-sim.ts starts
// it, kube-sim-process.ts is the child). The child's settings travel in one environment variable; every
// other exchange is an IPC message. Times that cross the channel are epoch milliseconds taken as
// performance.timeOrigin + performance.now(): monotonic within a process and, unlike performance.now()
// alone, comparable between processes.
import type { ClusterShape } from '../../data/generate-cluster.js';
import type { ExporterNode, GpuExporterSettings } from '../telemetry/full-scale-exporters.js';
import type { ChurnKind } from './pod-churn.js';

/** The environment variable that carries a child's KubeSimSettings, as JSON. */
export const SETTINGS_VARIABLE = 'BENCH_KUBE_SIM';

export interface KubeSimSettings {
  /** Cluster, context and user name of the kubeconfig. */
  clusterName: string;
  shape: ClusterShape;
  /** generateCluster's seed: the cluster's index in its fleet, so that clusters of one run differ. */
  seed: number;
  /** The instant the generated objects' times are relative to (epoch ms). */
  now: number;
  /** Added to the real clock for the times churn writes into pods (a run whose service clock is shifted). */
  clockOffsetMs: number;
  /** PodChurn's seed: two clusters that churn at once need different seeds, or their new pods share uids. */
  churnSeed: number;
  historyLimit: number;
  bookmarkIntervalMs: number;
  /** Lag samples and spot checks are taken in this organization's namespaces only. */
  organization: string;
  /** Standalone pods, and Jobs, that the ready message asks the benchmark to check (0: none). */
  spotChecksPerKind: number;
  /** Set: the cluster also runs a dcgm-exporter pod on every node (full-scale-exporters.ts). */
  gpuExporters?: GpuExporterSettings;
}

export interface FleetCounts {
  namespaces: number;
  nodes: number;
  jobs: number;
  pods: number;
  jobPods: number;
  /** Rows the index holds once this cluster is synced: one per GPU Job and per standalone GPU pod. */
  expectedWorkloads: number;
}

/** An object whose row the benchmark reads after the sync, and the fields the row must show. */
export interface SpotCheck {
  id: string;
  /** "Pod namespace/name", for the mismatch message. */
  label: string;
  expected: Record<string, string>;
}

export interface SimReady {
  type: 'ready';
  /** Where the simulated API listens (loopback, a port the OS chose) and a kubeconfig with its token. */
  url: string;
  kubeconfig: string;
  counts: FleetCounts;
  spotChecks: SpotCheck[];
  /** Generating the objects and seeding the store, in seconds of the child's wall clock. */
  generateSeconds: number;
  seedSeconds: number;
  /** With `gpuExporters`: each node's exporter, for the exporter fleet to serve. */
  exporterNodes?: ExporterNode[];
}

export interface SimFailed {
  type: 'failed';
  message: string;
}

export interface ChurnCommand {
  type: 'churn';
  /** Events per second this child offers, and for how long. */
  rate: number;
  seconds: number;
  /** One lag sample per this many ms of stream; 0: none. */
  sampleEveryMs: number;
}

/** A change the lag probe should find in the API: sent the moment it is made. */
export interface ChurnSample {
  type: 'sample';
  uid: string;
  kind: ChurnKind;
  visibleAs: readonly string[];
  /** Epoch ms right after the store write (performance.timeOrigin + performance.now()). */
  at: number;
}

export interface ChurnReport {
  type: 'churned';
  emitted: number;
  byKind: Record<string, number>;
  /** The churn loop's own duration: offeredRate is emitted over it. */
  windowSeconds: number;
  offeredRate: number;
  /** CPU the child used during the window (user + system), all of it: churn, watch writes, bookmarks. */
  cpuSeconds: number;
  /** Most bytes written to the watches and not yet read by their clients during the window. */
  maxWatchBufferedBytes: number;
  /** Set when a pool of the churn ran dry: the step's figures stop there. */
  error?: string;
}

export interface StatusCommand {
  type: 'status';
}

export interface SimStatus {
  type: 'status';
  /** LIST requests (not watches) served so far, by path. */
  listRequests: { pods: number; jobs: number };
  watches: { open: number; bufferedBytes: number };
  /** Most bytes the watches held unread since the previous status answer (sampled every few ms). */
  maxWatchBufferedBytes: number;
}

export interface StopCommand {
  type: 'stop';
}

export type ToSim = ChurnCommand | StatusCommand | StopCommand;
export type FromSim = SimReady | SimFailed | ChurnSample | ChurnReport | SimStatus;

/** Now as epoch ms with performance.now()'s resolution: the clock every cross-process time uses. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}
