// The columns of workload_usage and of its daily rollups (schema v6 on both backends). A usage row
// carries every key a statistic groups by (USAGE_KEYS); the rollups are shaped like the workloads'
// own (src/store/rollups/definitions.ts), so that a statistic reads as many usage rows as it reads
// workloads rollup rows: one keyed by instance type and failure reason (the summary, and the groups
// by initiative, instance type or failure reason), one by submitter. A single rollup of every key
// held about a row per workload: at 1M rows it made `stats_30d` 10× slower.
import { weekStartSql } from '../statistics/week-sql.js';

export const USAGE_KEYS = ['organization_id', 'day', 'initiative_id', 'submitted_by', 'instance_type', 'failure_reason'] as const;
export const USAGE_VALUES = ['util_seconds', 'util_weighted', 'idle_seconds', 'power_seconds', 'energy_dj'] as const;
/** Every figure of a workload_usage row: the summed values and its XID error count. */
export const USAGE_FIGURES = [...USAGE_VALUES, 'gpu_errors'] as const;

export type UsageKey = (typeof USAGE_KEYS)[number];

export interface UsageRollup {
  readonly table: 'stats_daily_usage' | 'stats_daily_usage_submitter' | 'stats_daily_usage_initiative' | 'stats_weekly_usage_submitter';
  /** The primary key, in the table's column order; the values follow (USAGE_VALUES). */
  readonly keys: readonly UsageKey[];
  /** 'week': `day` holds the Monday of the week of the usage row's day. */
  readonly period?: 'week';
}

/** The SQL of `key` in `rollup` for a usage row's column `column` (`day` becomes its Monday in a weekly rollup). */
export function usageKeySql(rollup: UsageRollup, key: UsageKey, column: string): string {
  return key === 'day' && rollup.period === 'week' ? weekStartSql(column) : column;
}

/** The usage rollups schema v6 created (migrations/v06-usage.ts, whose SQL never changes). */
export const USAGE_ROLLUPS_V6: readonly UsageRollup[] = [
  { table: 'stats_daily_usage', keys: ['organization_id', 'day', 'initiative_id', 'instance_type', 'failure_reason'] },
  { table: 'stats_daily_usage_submitter', keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'] },
];

/** The usage rollup of schema v10, for the summary and the groups by initiative (migrations/v10-initiative-rollups.ts). */
export const INITIATIVE_USAGE: UsageRollup = { table: 'stats_daily_usage_initiative', keys: ['organization_id', 'day', 'initiative_id'] };

/** The usage rollup of schema v11, for the groups by submitter over whole weeks (migrations/v11-weekly-submitter-rollups.ts). */
export const WEEKLY_SUBMITTER_USAGE: UsageRollup = {
  table: 'stats_weekly_usage_submitter', keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'], period: 'week',
};

/** Every usage rollup. */
export const USAGE_ROLLUPS: readonly UsageRollup[] = [...USAGE_ROLLUPS_V6, INITIATIVE_USAGE, WEEKLY_SUBMITTER_USAGE];
