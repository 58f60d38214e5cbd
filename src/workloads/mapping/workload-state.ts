// The lifecycle part of a workload row, as the status mappers derive it.
import type { WorkloadStatus } from '../../domain/workload.js';

export interface WorkloadState {
  status: WorkloadStatus;
  /** status.startTime; null until started. */
  startedAt: number | null;
  /** Completion, failure or deletion time; null until terminal. */
  completedAt: number | null;
  /** First non-zero container exit code of the (last) terminated pod, else 0; null until terminal. */
  exitCode: number | null;
}
