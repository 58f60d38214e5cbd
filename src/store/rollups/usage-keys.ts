// Where a workload's usage is counted in stats_daily_usage (schema v6): at its workloads row's keys,
// the failure reason '' when it has none. Writers move the usage when a row write changes them, and
// place it when the row is first written (samples may come before it).
import { dayOf } from './figures.js';

/** The columns of a workloads row that place its usage. */
export interface UsageKeySource {
  workload_id: string;
  organization_id: string;
  submitted_at: number;
  initiative_id: string;
  submitted_by: string;
  instance_type: string;
  failure_reason: string | null;
}

type UsageKeys = Omit<UsageKeySource, 'workload_id'>;

/** Whether a row write can change where the workload's usage is counted (a new row included). */
export function usageKeysChanged(before: UsageKeys | undefined, after: UsageKeys): boolean {
  return before === undefined || before.organization_id !== after.organization_id ||
    dayOf(before.submitted_at) !== dayOf(after.submitted_at) ||
    before.initiative_id !== after.initiative_id || before.submitted_by !== after.submitted_by ||
    before.instance_type !== after.instance_type || (before.failure_reason ?? '') !== (after.failure_reason ?? '');
}
