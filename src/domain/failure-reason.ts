// Why a workload did not complete (docs/workloads.md "Why a workload failed"): set on failed and
// cancelled workloads only. The order of FAILURE_REASONS is the order of precedence when several
// apply: the first that matches is the reason.
export const FAILURE_REASONS = [
  'preempted',
  'node_lost',
  'evicted',
  'deleted',
  'gpu_error',
  'oom_killed',
  'deadline_exceeded',
  'backoff_limit_exceeded',
  'nonzero_exit',
  'unknown',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export function isFailureReason(value: unknown): value is FailureReason {
  return typeof value === 'string' && (FAILURE_REASONS as readonly string[]).includes(value);
}
