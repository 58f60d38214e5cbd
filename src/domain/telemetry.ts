// What the telemetry flow persists: each workload's GPU metric totals over its whole life, so
// `job_lifetime` outlives the pods, the rings' 24 hours and the process.
import type { GpuUsage } from './gpu-usage.js';
import type { MetricName } from './metrics.js';

/** Totals of one metric over every sample attributed to a workload, in reported units. */
export interface MetricTotals {
  count: number;
  sum: number;
  min: number;
  max: number;
  /** Mean of each GPU's latest sample when last saved; null when no GPU had one. */
  current: number | null;
}

export type LifetimeTotals = Partial<Record<MetricName, MetricTotals>>;

/** Where lifetime totals are kept (the SQLite index implements it). */
export interface LifetimeRepository {
  loadLifetime(workloadId: string): LifetimeTotals | undefined;
  /**
   * Replaces the stored totals of each workload, and adds `usage` (what its GPUs did since the last
   * save: absent when nothing) to its stored usage figures, in one transaction.
   */
  saveLifetimes(entries: readonly LifetimeSave[]): void;
}

export interface LifetimeSave {
  workloadId: string;
  totals: LifetimeTotals;
  usage?: GpuUsage;
}

/**
 * One workload's samples in one summary bucket (telemetry_summary_seconds wide), per metric slot in
 * METRIC_NAMES order, in reported units. `latestSum` and `latestCount` sum each GPU's newest sample
 * of the bucket; `current` is their mean as the API rounds it (null: no GPU had one).
 */
export interface GpuBucketRow {
  workloadId: string;
  clusterId: string;
  count: number[];
  sum: number[];
  min: (number | null)[];
  max: (number | null)[];
  latestSum: number[];
  latestCount: number[];
  current: (number | null)[];
  /** What the workload's GPUs did in the bucket (src/domain/gpu-usage.ts), added to its usage figures with the bucket. */
  usage: GpuUsage;
}

/** A workload's buckets folded over a window, per metric slot; `latest*` come from its newest bucket. */
export interface GpuWindowTotals {
  count: number[];
  sum: number[];
  min: (number | null)[];
  max: (number | null)[];
  latestSum: number[];
  latestCount: number[];
}

/** One stored bucket's figures per metric slot, for percentiles: min and max are null where count is 0. */
export interface GpuBucketFigures {
  count: number[];
  sum: number[];
  min: (number | null)[];
  max: (number | null)[];
}

/**
 * Where GPU telemetry summaries are shared between replicas (the PostgreSQL index implements it): the
 * writer of each cluster writes its workloads' buckets, and every replica answers from them.
 */
export interface GpuSummaryStore {
  /**
   * Adds one bucket of rows starting at `bucketAt` (epoch ms), and each row into its workload's
   * lifetime totals, once: a bucket already stored for a workload is left as it is, so a retry or a
   * second writer adds nothing twice. Returns the rows stored.
   */
  writeBucket(bucketAt: number, rows: readonly GpuBucketRow[]): Promise<number>;
  /** Recomputes the cluster's last-hour figures (rankings) from its buckets in [to − 1 h, to). */
  refreshLastHour(clusterId: string, to: number): Promise<void>;
  /** Drops the cluster's buckets older than `before` (epoch ms). Returns how many went. */
  pruneBuckets(clusterId: string, before: number): Promise<number>;
  /** The workload's buckets starting in [from, to); null without any. */
  window(workloadId: string, window: { from: number; to: number }): Promise<GpuWindowTotals | null>;
  /** The workload's buckets starting in [from, to), one by one (percentiles), in no particular order. */
  buckets(workloadId: string, window: { from: number; to: number }): Promise<GpuBucketFigures[]>;
  /**
   * Every bucket still stored for the workload, and its lifetime sample count per metric, read in one
   * snapshot: the buckets hold its whole life exactly where the counts agree.
   */
  lifetimeBuckets(workloadId: string): Promise<{ buckets: GpuBucketFigures[]; counts: Partial<Record<MetricName, number>> }>;
  /** Per workload with samples of slot `slot` in the last hour as of `now`: their totals in that slot. */
  lastHour(slot: number, now: number): Promise<Map<string, { sum: number; count: number; latestSum: number; latestCount: number }>>;
  lifetime(workloadId: string): Promise<LifetimeTotals | undefined>;
}
