// What the read side needs from the rest of the service. Each port is owned here, by its consumer;
// the SQLite index, the telemetry rings and the capacity ConfigMaps implement them. Every read is
// async so a heavy query can move off the event loop (worker thread) without changing callers.
import type { CapacityBudget } from '../domain/capacity-budget.js';
import type { CapacityType } from '../domain/capacity-type.js';
import type { PriceKey, RateSegment } from '../domain/price-table.js';
import type { FleetNode } from '../domain/fleet.js';
import type { UsageFigures } from '../domain/gpu-usage.js';
import type { Scope } from '../access/principal.js';
import type { TrendInterval } from '../domain/trend-interval.js';
import type { WorkloadRecord, WorkloadStatus, WorkloadView } from '../domain/workload.js';
import type { MetricName, MetricSummary, RankedMetricName } from '../domain/metrics.js';
import type { Percentile } from '../domain/percentiles.js';

/** Filters of the list, statistics, ranking and capacity reads. Times are epoch ms. */
export interface WorkloadFilter {
  scope: Scope;
  initiativeId?: string;
  status?: WorkloadStatus;
  submittedBy?: string;
  isManaged?: boolean;
  /** submitted_at >= this (inclusive). */
  submittedFrom?: number;
  /** submitted_at < this (exclusive). */
  submittedBefore?: number;
}

/** Position in the list order (submitted_at DESC, workload_id DESC); the page starts after it. */
export interface Keyset {
  submittedAt: number;
  workloadId: string;
}

export interface ListPage {
  items: WorkloadRecord[];
  /** Every row matching the filter, not only this page. */
  totalCount: number;
  /** True when rows follow the last item of this page. */
  hasMore: boolean;
}

/**
 * failure_reason and gpu_model are additions to the contract; the group of workloads without one has
 * the key ''. The rollups hold no GPU model: its groups are summed from the rows.
 */
export const STATS_GROUP_KEYS = ['submitted_by', 'initiative_id', 'instance_type', 'failure_reason', 'gpu_model'] as const;
export type StatsGroupKey = (typeof STATS_GROUP_KEYS)[number];

export interface StatsFigures extends UsageFigures {
  workloadCount: number;
  gpuHours: number;
  /** Mean duration of the workloads that started; 0 when none did. */
  averageDurationSeconds: number;
  /** completed / (completed + failed); 0 when there are none. */
  successRate: number;
  /** Mean wait from submission to start (to now while waiting) of every workload counted; 0 when there are none. */
  averageQueueSeconds: number;
}

export interface StatsResult {
  summary: StatsFigures;
  /** Sorted by gpuHours descending (then key ascending); empty when no groupBy was asked. */
  groups: (StatsFigures & { key: string })[];
}

/**
 * The most workloads whose waits queue percentiles read one by one: up to this many in the filter,
 * each percentile is exact; more, and they are taken from wait buckets, in memory bounded by the
 * buckets rather than the workloads (WAIT_BUCKET_ERROR).
 */
export const EXACT_QUEUE_WAITS = 1_000_000;

/**
 * How far below the exact percentile one taken from buckets may be, as a share of it: it is the
 * smallest wait of the bucket holding the rank, and a bucket spans less than 1/128 of its waits
 * (waits under 256 s have a bucket per second, so those stay exact). Never above the exact value.
 */
export const WAIT_BUCKET_ERROR = 1 / 128;

/**
 * The nearest-rank percentiles of queue time of a filter's workloads, in whole seconds (the
 * queue_seconds of one of them), in the order asked; null where no workload counts. Exact when the
 * filter holds at most `exactWaits` workloads, else within WAIT_BUCKET_ERROR below (`exact` false).
 */
export interface QueuePercentiles {
  /** False when they came from wait buckets (more workloads than `exactWaits`). */
  exact: boolean;
  summary: (number | null)[];
  /** One per group of workloads, as stats' groups are keyed; empty without groupBy. */
  groups: { key: string; values: number[] }[];
}

export interface TrendsResult {
  /** The non-empty (interval, group) pairs, by start, then as stats' groups. */
  series: TrendEntry[];
  /** The statistics of the same window: each group and the summary are the sums of their entries. */
  stats: StatsResult;
}

/** One interval of a series (and one group, when grouped): the statistics of the workloads submitted in it. */
export interface TrendEntry extends StatsFigures {
  /** Start of the interval (src/domain/trend-interval.ts). */
  start: number;
  /** The group's key; null without groupBy. */
  key: string | null;
}

export interface GpuHoursRanking {
  entries: { workloadId: string; name: string; initiativeId: string; gpuHours: number }[];
  totalCount: number;
  /** Mean GPU-hours over every workload of the filter; null when there is none. */
  average: number | null;
}

export interface QueueRanking {
  /** queueSeconds: whole seconds, as the workload's own queue_seconds. */
  entries: { workloadId: string; name: string; initiativeId: string; queueSeconds: number }[];
  totalCount: number;
  /** Mean wait in seconds (of exact ms) over every workload of the filter; null when there is none. */
  average: number | null;
}

/** The usage rankings' keys (docs/api.md "Rankings"). */
export type UsageSortKey = 'idle_gpu_hours' | 'gpu_efficiency';

export interface UsageRanking {
  /** value: idle GPU-hours, or efficiency as a share of 1; coverage: the workload's sampled share of its GPU-time. */
  entries: { workloadId: string; name: string; initiativeId: string; value: number; coverage: number }[];
  /** Workloads of the filter with a utilization sample. */
  totalCount: number;
  /** Mean idle GPU-hours per ranked workload, or their efficiency weighted by sampled GPU-time; null when none. */
  average: number | null;
}

/** GPU-hours consumed inside a window, clipped to it, by initiative and by instance type. */
export interface UsageBreakdown {
  total: number;
  byInitiative: Map<string, number>;
  byInstanceType: Map<string, number>;
}

/** Per organization and initiative: workloads by status, and the GPUs of the running ones (the admin port's gauges). */
export interface TeamCounts {
  workloads: { organizationId: string; initiativeId: string; status: WorkloadStatus; count: number }[];
  activeGpus: { organizationId: string; initiativeId: string; gpus: number }[];
}

/** GPU-ms of one span (its index in the request) for one initiative and kind of GPU time. */
export interface PricedUsageRow {
  span: number;
  initiativeId: string;
  instanceType: string;
  clusterId: string;
  gpuModel: string | null;
  capacityType: CapacityType | null;
  gpuMs: number;
  /** The option's group (the statistics' '' for none); absent without groupBy. */
  key?: string;
  /** Start of the interval of submission; absent without interval. */
  submittedIn?: number;
  /** With usage: the idle GPU-ms and energy (dJ) of the workloads' sampled usage, spread over their pods' time. */
  idleGpuMs?: number;
  energyDj?: number;
}

/** What else a priced usage read is grouped by (statistics, rankings, the chargeback). */
export interface PricedUsageOptions {
  /** A statistics group key, or each workload. */
  groupBy?: StatsGroupKey | 'workload_id';
  /** Per interval of submission, as a series. */
  interval?: TrendInterval;
  /** Spread each workload's idle time and energy over its pods' time; its GPU-time is read at `now` as statistics read it. */
  usage?: { now: number };
}

/** One started pod's GPU time: whole-GPU equivalents from its start to its finish (null: not finished). */
export interface PodGpuTime {
  gpus: number;
  startedAt: number;
  finishedAt: number | null;
}

export interface WorkloadIndex {
  list(filter: WorkloadFilter, page: { limit: number; after: Keyset | null }): Promise<ListPage>;
  /** The workload whatever its organization; the caller checks the scope. */
  get(workloadId: string, now: number): Promise<WorkloadView | undefined>;
  /** The GPU time of each of the workload's pods that started (to price it exactly). */
  podGpuTimes(workload: { workloadId: string; submittedAt: number }): Promise<PodGpuTime[]>;
  stats(filter: WorkloadFilter, groupBy: StatsGroupKey | null, now: number): Promise<StatsResult>;
  /**
   * Nearest-rank percentiles of queue time over every workload of the filter, overall and per group:
   * exact over at most `exactWaits` workloads (default EXACT_QUEUE_WAITS), from wait buckets beyond.
   */
  queuePercentiles(
    filter: WorkloadFilter,
    options: { groupBy: StatsGroupKey | null; percentiles: readonly Percentile[]; exactWaits?: number },
    now: number,
  ): Promise<QueuePercentiles>;
  /** The series of the filter's window, and the statistics it adds up to, from one read. */
  trends(filter: WorkloadFilter, options: { groupBy: StatsGroupKey | null; interval: TrendInterval }, now: number): Promise<TrendsResult>;
  rankByGpuHours(filter: WorkloadFilter, options: { order: 'asc' | 'desc'; limit: number; now: number }): Promise<GpuHoursRanking>;
  /** Workloads by their wait from submission to start, pending ones up to `now`. */
  rankByQueue(filter: WorkloadFilter, options: { order: 'asc' | 'desc'; limit: number; now: number }): Promise<QueueRanking>;
  /** Workloads by their lifetime usage; only those with a utilization sample are ranked. */
  rankByUsage(
    filter: WorkloadFilter,
    options: { sortBy: UsageSortKey; order: 'asc' | 'desc'; limit: number; now: number },
  ): Promise<UsageRanking>;
  /** Name and initiative of those of `workloadIds` that match the filter (for rankings built elsewhere). */
  describe(workloadIds: readonly string[], filter: WorkloadFilter): Promise<Map<string, { name: string; initiativeId: string }>>;
  /** GPU-hours of pod time inside [from, to), running pods counted up to `to`. `from` null: since ever. */
  usage(filter: WorkloadFilter, window: { from: number | null; to: number }): Promise<UsageBreakdown>;
  /**
   * GPU-ms of pod time inside each span, per initiative and kind of GPU time (what a rate matches on),
   * running pods counted up to each span's end: the sums a cost over a window is priced from.
   */
  pricedUsage(
    filter: WorkloadFilter,
    spans: readonly { from: number; to: number }[],
    options?: PricedUsageOptions,
  ): Promise<PricedUsageRow[]>;
  /** Σ gpu_count of the running workloads of the filter. */
  activeGpus(filter: WorkloadFilter): Promise<number>;
  /** Every organization's teams, with a workload or a running GPU: from the rollups and the running rows' index. */
  teamCounts(): Promise<TeamCounts>;
  /**
   * The key of next_token's MAC (cursor.ts). The index keeps it, made by the first process that
   * opened it, so that every replica on one PostgreSQL, and every run of a pod on its SQLite file,
   * issues and accepts the same tokens.
   */
  cursorKey(): Promise<Uint8Array>;
  /**
   * Days a finished workload stays in the index before retention deletes it (retention_days), which
   * is the longest span a custom statistics range may have; null when nothing deletes them (an index
   * opened without the service's retention: tests, tools).
   */
  retentionDays(): Promise<number | null>;
  /** The organization's fleet history in [from, to) (both boundaries of `grain`), summed per bucket and node kind. */
  fleetHistory(query: FleetHistoryQuery): Promise<FleetHistoryRow[]>;
}

export interface FleetHistoryQuery {
  organizationId: string;
  /** 'hour' reads fleet_hours, 'day' fleet_days. */
  grain: 'hour' | 'day';
  from: number;
  to: number;
  clusterId?: string;
  gpuModel?: string;
  /** One row per node (group_by=node); otherwise the nodes of a cluster, model and instance type are summed. */
  byNode: boolean;
}

/** GPU·ms of one bucket of the history: of a node, or of the nodes of one cluster, model, instance type and capacity type. */
export interface FleetHistoryRow {
  at: number;
  clusterId: string;
  /** '' unless byNode. */
  node: string;
  gpuModel: string | null;
  instanceType: string;
  /** The node's (on a day row, as of its latest hour that day); null when no label says. */
  capacityType: CapacityType | null;
  capacityMs: number;
  unavailableMs: number;
  allocatedMs: number;
  idleMs: number;
}

/** Per-workload GPU telemetry (filled by the sampler; empty until then). */
export interface TelemetryReader {
  /**
   * One summary per asked metric; metrics with no sample in the window are EMPTY_SUMMARY (all null).
   * `percentiles` (ascending, each once): add `pNN` to each summary; a reader that cannot tell one
   * leaves it out, and the caller reports it null.
   */
  summarize(request: {
    workload: WorkloadView;
    window: { from: number; to: number };
    lifetime: boolean;
    metrics: readonly MetricName[];
    percentiles?: readonly Percentile[];
  }): Promise<Record<MetricName, MetricSummary>>;
  /** Workloads with samples of `metric` in the last hour before `now`: their mean and current value. */
  lastHour(metric: RankedMetricName, now: number): Promise<Map<string, { avg: number; current: number }>>;
}

/** Budgets from capacity ConfigMaps (filled by the capacity source; none until then). */
/** The GPU nodes of the watched clusters, live (src/fleet/fleet-inventory.ts). */
export interface FleetSource {
  /** The GPU nodes of the clusters of this organization, by cluster then node name. */
  nodes(organizationId: string): readonly FleetNode[];
}

export interface BudgetSource {
  budgetFor(organizationId: string): CapacityBudget | undefined;
  /** Every budget in force. */
  budgets(): CapacityBudget[];
}

/** Prices from prices ConfigMaps (src/capacity/pricing.ts); an organization without one has no costs anywhere. */
export interface PriceSource {
  pricesFor(organizationId: string): OrganizationPrices | undefined;
}

/** One organization's prices as they stand now (docs/capacity.md, "Prices"). */
export interface OrganizationPrices {
  currency: string;
  /** Digits after the point that amounts are rounded to (2 for USD). */
  minorUnits: number;
  energyRatePerKwh: number | null;
  /** Every instant at which some rate starts or stops, ascending: between two of them every kind of GPU time has one rate. */
  changes: readonly number[];
  /** The rate in force over time for GPU time of this kind; the pool comes from the organization's budget. */
  segments(key: Omit<PriceKey, 'poolId'>): readonly RateSegment[];
}

/** Whether the index holds a complete picture yet (every informer synced once). */
export interface IndexReadiness {
  isReady(): boolean;
}

/** One readiness condition: met once, failing now (what it served last is still served), or no longer awaited. */
export interface SourceCondition {
  ready: boolean;
  failure: string | null;
  waived: boolean;
}

/** Overall health for the anonymous /v1/health. */
export interface HealthSource extends IndexReadiness {
  /** Every condition by name: `index`, `cluster/<id>/<resource>…`, `telemetry`, `capacity`, `remote-kubeconfig/<file>`. */
  report(): { conditions: Record<string, SourceCondition> };
}

/**
 * An index's refusal of a read for now (every reader busy, the queue full): an error of the port, not
 * of HTTP, which the API answers 503 with Retry-After.
 */
export class IndexBusyError extends Error {
  /** How long the caller should wait before trying again: the queue drains in about that time. */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = 'IndexBusyError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
