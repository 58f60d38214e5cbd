// What the telemetry flow persists: each workload's GPU metric totals over its whole life, so
// `job_lifetime` outlives the pods, the rings' 24 hours and the process.
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
  /** Replaces the stored totals of each workload, in one transaction. */
  saveLifetimes(entries: readonly { workloadId: string; totals: LifetimeTotals }[]): void;
}
