// The workload as the API and the index know it. Times are epoch milliseconds (UTC) inside the
// service and ISO 8601 strings only at the HTTP edge.
import type { CapacityType } from './capacity-type.js';
import type { FailureReason } from './failure-reason.js';
import type { GpuSharing } from './gpu-sharing.js';
import type { GpuUsage } from './gpu-usage.js';

export const WORKLOAD_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type WorkloadStatus = (typeof WORKLOAD_STATUSES)[number];

/** The value of a text field that no label gives (submitted_by, instance_type): never empty, never null. */
export const UNKNOWN = 'unknown';

export const TERMINAL_STATUSES: readonly WorkloadStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: WorkloadStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** What kind of Kubernetes object a workload was derived from. */
export type WorkloadKind = 'Job' | 'Pod';

/** One row of the index, as written by the indexer (and by tests and benchmarks). */
export interface WorkloadRecord {
  workloadId: string;
  organizationId: string;
  clusterId: string;
  namespace: string;
  name: string;
  kind: WorkloadKind;
  status: WorkloadStatus;
  submittedBy: string;
  initiativeId: string;
  instanceType: string;
  gpuCount: number;
  /**
   * Whole-GPU equivalents held (gpu_count × the share of each device), on the configured basis; absent
   * for rows written before shares were counted, which hold gpu_count.
   */
  allocatedGpus?: number;
  /** How its GPUs were shared; absent (null in the API) for rows written before. */
  gpuSharing?: GpuSharing;
  /** The GPU product, GFD's name without its suffixes; null when unknown. */
  gpuModel?: string | null;
  /**
   * How the node it runs on is sold (domain/capacity-type.ts); null when no label says. Absent for rows
   * written before schema v15, and as read back when unknown: the index cannot tell the two apart.
   */
  capacityType?: CapacityType | null;
  submittedAt: number;
  startedAt: number | null;
  completedAt: number | null;
  exitCode: number | null;
  /** Why a failed or cancelled workload did not complete; null for every other status. */
  failureReason: FailureReason | null;
  isManaged: boolean;
  /** Kubernetes resourceVersion of the object the row was derived from; '' when not from Kubernetes. */
  resourceVersion: string;
}

/**
 * The time one pod of a workload held its GPUs. GPU-hours are the sum of these intervals, so a Job's
 * retried or parallel pods each count for the time they ran.
 */
export interface PodGpuInterval {
  podUid: string;
  workloadId: string;
  gpus: number;
  /** Whole-GPU equivalents the pod held, on the configured basis; absent: `gpus` (intervals written before). */
  share?: number;
  startedAt: number | null;
  /** null while the pod still runs. */
  finishedAt: number | null;
}

/** A workload as read back, with the figures that depend on the time of reading. */
export interface WorkloadView extends WorkloadRecord {
  durationSeconds: number;
  gpuHoursUsed: number;
  queueSeconds: number;
  /** What its GPUs did (src/domain/gpu-usage.ts); null while nothing was sampled. */
  usage: Omit<GpuUsage, 'gpuErrors'> | null;
}
