// The columns of workload_usage and of its daily rollups (schema v6 on both backends). A usage row
// carries every key a statistic groups by (USAGE_KEYS); the rollups are shaped like the workloads'
// own (src/store/rollups/definitions.ts), so that a statistic reads as many usage rows as it reads
// workloads rollup rows: one keyed by instance type and failure reason (the summary, and the groups
// by initiative, instance type or failure reason), one by submitter. A single rollup of every key
// held about a row per workload: at 1M rows it made `stats_30d` 10× slower.
export const USAGE_KEYS = ['organization_id', 'day', 'initiative_id', 'submitted_by', 'instance_type', 'failure_reason'] as const;
export const USAGE_VALUES = ['util_seconds', 'util_weighted', 'idle_seconds', 'power_seconds', 'energy_dj'] as const;
/** Every figure of a workload_usage row: the summed values and its XID error count. */
export const USAGE_FIGURES = [...USAGE_VALUES, 'gpu_errors'] as const;

export type UsageKey = (typeof USAGE_KEYS)[number];

export interface UsageRollup {
  readonly table: 'stats_daily_usage' | 'stats_daily_usage_submitter' | 'stats_daily_usage_initiative';
  /** The primary key, in the table's column order; the values follow (USAGE_VALUES). */
  readonly keys: readonly UsageKey[];
}

/** The usage rollups schema v6 created (migration-v6.ts, whose SQL never changes). */
export const USAGE_ROLLUPS_V6: readonly UsageRollup[] = [
  { table: 'stats_daily_usage', keys: ['organization_id', 'day', 'initiative_id', 'instance_type', 'failure_reason'] },
  { table: 'stats_daily_usage_submitter', keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'] },
];

/** Every usage rollup: v6's, and v10's for the summary and the groups by initiative (migration-v10.ts). */
export const USAGE_ROLLUPS: readonly UsageRollup[] = [
  ...USAGE_ROLLUPS_V6,
  { table: 'stats_daily_usage_initiative', keys: ['organization_id', 'day', 'initiative_id'] },
];
