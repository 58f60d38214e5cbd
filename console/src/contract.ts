// What the console reads of the public /v1 API (docs/api.md). The value lists are the API's own;
// test/console/contract.test.ts keeps them equal to the OpenAPI document the service serves.

export const WORKLOAD_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export const METRIC_NAMES = ['gpu_utilization', 'memory_utilization', 'temperature', 'power_usage', 'gpu_usage'] as const;
export const METRICS_TIME_RANGES = ['last_1h', 'last_6h', 'last_24h', 'job_lifetime'] as const;
export const RANKING_SORT_KEYS = ['gpu_utilization', 'memory_utilization', 'power_usage', 'gpu_hours', 'idle_gpu_hours', 'gpu_efficiency', 'queue_seconds', 'cost'] as const;
export const STATS_TIME_RANGES = ['today', 'this_week', 'this_month', 'last_7_days', 'last_30_days', 'custom'] as const;
export const STATS_GROUP_KEYS = ['submitted_by', 'initiative_id', 'instance_type', 'failure_reason', 'gpu_model'] as const;
export const TREND_INTERVALS = ['hour', 'day', 'week'] as const;
export const LIST_LIMITS = [10, 20, 50, 100] as const;
export const FLEET_NODE_STATES = ['ready', 'cordoned', 'not_ready'] as const;
export const CHARGEBACK_GROUP_KEYS = ['submitted_by', 'pool_id', 'gpu_model'] as const;

export type WorkloadStatus = (typeof WORKLOAD_STATUSES)[number];
export type MetricName = (typeof METRIC_NAMES)[number];
export type MetricsTimeRange = (typeof METRICS_TIME_RANGES)[number];
export type RankingSortKey = (typeof RANKING_SORT_KEYS)[number];
export type StatsGroupKey = (typeof STATS_GROUP_KEYS)[number];
export type FleetNodeState = (typeof FLEET_NODE_STATES)[number];
export type ChargebackGroupKey = (typeof CHARGEBACK_GROUP_KEYS)[number];

export interface WorkloadListItem {
  workload_id: string;
  name: string;
  status: WorkloadStatus;
  submitted_by: string;
  initiative_id: string;
  instance_type: string;
  gpu_count: number;
  submitted_at: string;
  started_at: string | null;
}

export const GPU_SHARING = ['exclusive', 'mig', 'time_slicing', 'mps', 'fractional'] as const;
export type GpuSharing = (typeof GPU_SHARING)[number];

export interface Workload extends WorkloadListItem {
  completed_at: string | null;
  duration_seconds: number;
  gpu_hours_used: number;
  exit_code: number | null;
  is_managed: boolean;
  cluster_id: string;
  namespace: string;
  queue_seconds: number;
  failure_reason: string | null;
  allocated_gpus: number;
  gpu_sharing: GpuSharing | null;
  gpu_model: string | null;
  idle_gpu_hours: number | null;
  gpu_efficiency: number | null;
  utilization_coverage: number;
  energy_kwh: number | null;
  energy_coverage: number;
  // Present only for an organization with prices (docs/api.md, "Cost"): absent, the record is as before.
  currency?: string;
  /** null: it used GPU time and no rate matched any of it. */
  cost?: number | null;
  /** null: energy is not priced, or none was measured. */
  energy_cost?: number | null;
  unpriced_gpu_hours?: number;
}

export interface MetricSummary {
  avg: number | null;
  min: number | null;
  max: number | null;
  current: number | null;
}

export interface WorkloadMetrics {
  workload_id: string;
  time_range: string;
  metrics: Partial<Record<MetricName, MetricSummary>>;
}

/** A statistic's cost, present only for an organization with prices (docs/api.md, Statistics "Cost"). */
export interface StatsCost {
  /** null: it used GPU time and no rate matched any of it. */
  cost?: number | null;
  /** null where no idle time was sampled. */
  idle_cost?: number | null;
  unpriced_gpu_hours?: number;
}

export interface StatsFigures extends StatsCost {
  workload_count: number;
  gpu_hours: number;
  success_rate: number;
  average_queue_seconds: number;
  idle_gpu_hours: number | null;
  gpu_efficiency: number | null;
  energy_kwh: number | null;
}

export type StatsGroup = StatsFigures & Partial<Record<StatsGroupKey, string | null>>;
export type StatsSeriesEntry = StatsGroup & { start: string };

export interface WorkloadStats {
  /** With prices only: the currency of every cost of the answer. */
  currency?: string;
  summary: {
    total_workloads: number;
    total_gpu_hours: number;
    average_duration_seconds: number;
    success_rate: number;
    average_queue_seconds: number;
    total_idle_gpu_hours: number | null;
    gpu_efficiency: number | null;
    total_energy_kwh: number | null;
    total_cost?: number | null;
    total_idle_cost?: number | null;
    unpriced_gpu_hours?: number;
  };
  grouped: StatsGroup[];
  series?: StatsSeriesEntry[];
}

export type RankedValue = { avg: number; current: number } | { total: number } | { value: number; coverage: number } | { total: number; coverage: number };

export interface RankedWorkload {
  workload_id: string;
  name: string;
  initiative_id: string;
  [key: string]: string | RankedValue;
}

export interface RankedWorkloads {
  workloads: RankedWorkload[];
  scope_average: Partial<Record<RankingSortKey, number | null>>;
}

export interface Forecast {
  burn_rate_gpu_hours_per_day: number;
  projected_used_gpu_hours_at_period_end: number | null;
  projected_exhaustion_at: string | null;
}

/** A budget entry's figures in money, present only for an organization with prices (docs/api.md, Capacity "Cost"). */
export interface BudgetCost {
  used_cost?: number;
  burn_rate_cost_per_day?: number;
}

export interface Budget extends Forecast, BudgetCost {
  allocated_gpu_hours: number;
  used_gpu_hours: number;
  remaining_gpu_hours: number;
}

export interface Capacity {
  organization_id: string;
  /** With prices only. */
  currency?: string;
  summary: Forecast & {
    total_allocated_gpu_hours: number;
    total_used_gpu_hours: number;
    total_remaining_gpu_hours: number;
    current_active_gpus: number;
    // With prices only; allocated and remaining are null when the budget states no allocated_cost.
    total_allocated_cost?: number | null;
    total_used_cost?: number;
    total_remaining_cost?: number | null;
    burn_rate_cost_per_day?: number;
    unpriced_gpu_hours?: number;
  };
  pools: (Budget & PoolHardware & { pool_id: string; name: string; instance_types: string[] })[];
  initiatives: (Budget & { initiative_id: string; name: string })[];
}

/** A pool's budget against the GPU-hours its nodes can give in the whole period. */
export interface PoolHardware {
  /** null when the period has no end (`total`). */
  capacity_gpu_hours_in_period: number | null;
  over_committed: boolean;
}

/** The fleet's GPUs now, in whole-GPU equivalents. */
export interface FleetNow {
  total_gpus: number;
  allocated_gpus: number;
  unallocated_gpus: number;
  unavailable_gpus: number;
  nodes: number;
  nodes_unavailable: number;
}

/** The fleet's GPU-hours over a range or an interval of it. */
export interface FleetHours {
  capacity_gpu_hours: number;
  unavailable_gpu_hours: number;
  allocated_gpu_hours: number;
  idle_gpu_hours: number;
  unallocated_gpu_hours: number;
  allocation_rate: number | null;
  utilization_rate: number | null;
}

export interface Fleet {
  time_range: string;
  start: string;
  end: string;
  now: FleetNow;
  summary: FleetHours;
  grouped: (FleetNow & FleetHours & { key: string })[];
  series?: (FleetHours & { start: string; grouped?: (FleetHours & { key: string })[] })[];
}

export interface FleetNode {
  cluster_id: string;
  node: string;
  gpu_model: string | null;
  instance_type: string;
  pool_id: string | null;
  state: FleetNodeState;
  gpu_sharing: GpuSharing;
  total_gpus: number;
  allocated_gpus: number;
  unallocated_gpus: number;
  unavailable_gpus: number;
  unhealthy_gpus: number;
}

/** What a line of a chargeback and its total have in common. Amounts are null without prices. */
export interface ChargebackFigures {
  gpu_hours: number;
  cost: number | null;
  energy_kwh: number;
  energy_cost: number | null;
  idle_gpu_hours: number;
  idle_cost: number | null;
  total_cost: number | null;
}

/** One line of a chargeback: a team, or a team and a value of group_by. */
export interface ChargebackRow extends ChargebackFigures {
  initiative_id: string;
  key: string | null;
  shared_unallocated_cost: number | null;
}

/** GET /v1/chargeback: a UTC month's statement, ORG_ADMIN only. */
export interface Chargeback {
  organization_id: string;
  month: string;
  from: string;
  to: string;
  /** false for the current month, whose figures still grow. */
  complete: boolean;
  /** null without prices: every amount is null then. */
  currency: string | null;
  group_by: ChargebackGroupKey | null;
  share_idle: boolean;
  rows: ChargebackRow[];
  idle: { gpu_hours: number; cost: number | null };
  unallocated: { gpu_hours: number; cost: number | null; shared: boolean };
  total: ChargebackFigures & { unallocated_gpu_hours: number; unallocated_cost: number | null };
  unpriced_gpu_hours: number;
  /** The rounding rule, in words. */
  rounding: string;
}

export interface ListMetadata {
  next_token?: string;
  total_count: number;
}

export interface ErrorBody {
  error: { code: string; message: string; details: { location: string; field: string; message: string }[] };
  request_id: string;
}
