// The reason of a failed or cancelled workload (src/domain/failure-reason.ts) from what every kind
// has: its state. The kinds' own evidence (a pod's OOMKilled container, a Job's failed condition)
// ranks above these fallbacks and is passed in by the mappers.
import type { FailureReason } from '../../domain/failure-reason.js';
import { FAILURE_REASONS } from '../../domain/failure-reason.js';
import type { WorkloadState } from '../mapping/workload-state.js';

/** The first of the candidates in the order of precedence, or null when the workload neither failed nor was cancelled. */
export function failureReasonOf(state: WorkloadState, evidence: readonly FailureReason[] = []): FailureReason | null {
  if (state.status !== 'failed' && state.status !== 'cancelled') return null;
  const candidates = new Set<FailureReason>(evidence);
  if (state.status === 'cancelled') candidates.add('deleted');
  else if (state.exitCode !== null && state.exitCode !== 0) candidates.add('nonzero_exit');
  return FAILURE_REASONS.find((reason) => candidates.has(reason)) ?? 'unknown';
}
