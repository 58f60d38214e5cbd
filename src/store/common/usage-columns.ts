// The columns of workload_usage's rollup, stats_daily_usage (schema v6 on both backends): its keys,
// every key a statistic groups by, and the usage figures summed (src/domain/gpu-usage.ts).
export const USAGE_KEYS = ['organization_id', 'day', 'initiative_id', 'submitted_by', 'instance_type', 'failure_reason'] as const;
export const USAGE_VALUES = ['util_seconds', 'util_weighted', 'idle_seconds', 'power_seconds', 'energy_dj'] as const;
