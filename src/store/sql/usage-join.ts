// Reading usage (schema v6) beside the workloads rows: the join of each row's usage, the sums that
// statistics add, and the figures made of them.
import { usageFigures, type UsageFigures } from '../../domain/gpu-usage.js';
import type { SqlDialect } from './dialect.js';
import { USAGE_VALUES } from '../usage/usage-columns.js';

/** Each workloads row `w` with its usage `u`, a primary-key probe (NULLs for a row without usage). */
export const USAGE_JOIN = 'LEFT JOIN workload_usage u ON u.workload_id = w.workload_id';

export type UsageSums = Record<(typeof USAGE_VALUES)[number], number>;

/** The sums of the usage columns under `prefix` (`u.` over rows, '' over a union's parts), named as the columns. */
export function usageSums(d: SqlDialect, prefix = ''): string {
  return USAGE_VALUES.map((v) => `${d.sumInt(`${prefix}${v}`)} AS ${v}`).join(', ');
}

export function noUsageSums(): UsageSums {
  return { util_seconds: 0, util_weighted: 0, idle_seconds: 0, power_seconds: 0, energy_dj: 0 };
}

export function usageFiguresOf(sums: UsageSums, gpuHours: number): UsageFigures {
  return usageFigures(
    {
      utilSeconds: sums.util_seconds,
      utilWeighted: sums.util_weighted,
      idleSeconds: sums.idle_seconds,
      powerSeconds: sums.power_seconds,
      energyDj: sums.energy_dj,
    },
    gpuHours,
  );
}
