// Rows of the workloads table to and from domain records, and the figures that depend on the time
// of reading. The SQL twin of gpuHoursAt (gpuHoursSql) lives in workload-sql.ts; tests keep the
// two in step. Statistics average durations in ms (durationMsSql), not these whole seconds.
import { isCapacityType } from '../../domain/capacity-type.js';
import { isFailureReason } from '../../domain/failure-reason.js';
import { isGpuSharing } from '../../domain/gpu-sharing.js';
import type { USAGE_VALUES } from '../usage/usage-columns.js';
import type { WorkloadKind, WorkloadRecord, WorkloadStatus, WorkloadView } from '../../domain/workload.js';

export interface WorkloadRow {
  workload_id: string;
  organization_id: string;
  cluster_id: string;
  namespace: string;
  name: string;
  kind: string;
  status: string;
  submitted_by: string;
  initiative_id: string;
  instance_type: string;
  gpu_count: number;
  submitted_at: number;
  started_at: number | null;
  completed_at: number | null;
  exit_code: number | null;
  is_managed: number;
  resource_version: string;
  /** Schema v5; NULL unless failed or cancelled. */
  failure_reason: string | null;
  /** Schema v12: whole-GPU equivalents held; NULL for rows written before (they hold gpu_count). */
  allocated_gpus: number | null;
  /** Schema v12: how its GPUs were shared; NULL for rows written before. */
  gpu_sharing: string | null;
  /** Schema v12: the GPU product; NULL when unknown. */
  gpu_model: string | null;
  /** Schema v15: how its node is sold (on-demand, spot, reserved); NULL when unknown, and for rows written before. */
  capacity_type: string | null;
}

export interface GpuAggregates {
  gpu_seconds_closed: number;
  open_gpus: number;
  open_gpu_start_sum: number;
}

export const RECORD_COLUMNS = [
  'workload_id', 'organization_id', 'cluster_id', 'namespace', 'name', 'kind', 'status', 'submitted_by',
  'initiative_id', 'instance_type', 'gpu_count', 'submitted_at', 'started_at', 'completed_at', 'exit_code',
  'is_managed', 'resource_version', 'failure_reason', 'allocated_gpus', 'gpu_sharing', 'gpu_model', 'capacity_type',
] as const satisfies readonly (keyof WorkloadRow)[];

export const AGGREGATE_COLUMNS = [
  'gpu_seconds_closed', 'open_gpus', 'open_gpu_start_sum',
] as const satisfies readonly (keyof GpuAggregates)[];

export function toRow(record: WorkloadRecord): WorkloadRow {
  return {
    workload_id: record.workloadId,
    organization_id: record.organizationId,
    cluster_id: record.clusterId,
    namespace: record.namespace,
    name: record.name,
    kind: record.kind,
    status: record.status,
    submitted_by: record.submittedBy,
    initiative_id: record.initiativeId,
    instance_type: record.instanceType,
    gpu_count: record.gpuCount,
    submitted_at: record.submittedAt,
    started_at: record.startedAt,
    completed_at: record.completedAt,
    exit_code: record.exitCode,
    is_managed: record.isManaged ? 1 : 0,
    resource_version: record.resourceVersion,
    failure_reason: record.failureReason,
    allocated_gpus: record.allocatedGpus ?? null,
    gpu_sharing: record.gpuSharing ?? null,
    gpu_model: record.gpuModel ?? null,
    capacity_type: record.capacityType ?? null,
  };
}

export function toRecord(row: WorkloadRow): WorkloadRecord {
  return {
    workloadId: row.workload_id,
    organizationId: row.organization_id,
    clusterId: row.cluster_id,
    namespace: row.namespace,
    name: row.name,
    // The CHECK constraints of the table guarantee these unions.
    kind: row.kind as WorkloadKind,
    status: row.status as WorkloadStatus,
    submittedBy: row.submitted_by,
    initiativeId: row.initiative_id,
    instanceType: row.instance_type,
    gpuCount: row.gpu_count,
    submittedAt: row.submitted_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    exitCode: row.exit_code,
    // A reason only a newer version knows reads as unknown here.
    failureReason: row.failure_reason === null ? null : isFailureReason(row.failure_reason) ? row.failure_reason : 'unknown',
    isManaged: row.is_managed === 1,
    resourceVersion: row.resource_version,
    ...shareOf(row),
    ...capacityTypeOf(row),
  };
}

/** What a row says of its share, when it says anything (rows before schema v12 do not). */
function shareOf(row: WorkloadRow): Pick<WorkloadRecord, 'allocatedGpus' | 'gpuSharing' | 'gpuModel'> {
  if (row.allocated_gpus === null) return {};
  return {
    allocatedGpus: row.allocated_gpus,
    // The CHECK constraint of the column guarantees the union; a sharing only a newer version knows reads as fractional.
    gpuSharing: isGpuSharing(row.gpu_sharing) ? row.gpu_sharing : 'fractional',
    gpuModel: row.gpu_model,
  };
}

/**
 * What a row says of its node's capacity type, when it says anything: NULL is both "unknown" and
 * "written before schema v15", which read the same (absent). A type only a newer version knows reads as unknown.
 */
function capacityTypeOf(row: WorkloadRow): Pick<WorkloadRecord, 'capacityType'> {
  return isCapacityType(row.capacity_type) ? { capacityType: row.capacity_type } : {};
}

/** A row as viewSql reads it: the usage columns are null for a workload without usage. */
export type ViewRow = WorkloadRow & GpuAggregates & { [K in (typeof USAGE_VALUES)[number]]: number | null };

export function toView(row: ViewRow, now: number): WorkloadView {
  return {
    ...toRecord(row),
    durationSeconds: durationSeconds(row, now),
    gpuHoursUsed: gpuHoursAt(row, now),
    queueSeconds: queueSeconds(row, now),
    usage: row.util_seconds === null ? null : {
      utilSeconds: row.util_seconds, utilWeighted: row.util_weighted ?? 0, idleSeconds: row.idle_seconds ?? 0,
      powerSeconds: row.power_seconds ?? 0, energyDj: row.energy_dj ?? 0,
    },
  };
}

/**
 * Whole seconds from submission to start; a workload that ended unstarted waited until it ended, one
 * still pending has waited until now.
 */
export function queueSeconds(row: Pick<WorkloadRow, 'submitted_at' | 'started_at' | 'completed_at'>, now: number): number {
  const until = row.started_at ?? row.completed_at ?? now;
  return Math.floor(Math.max(0, until - row.submitted_at) / 1000);
}

/** Whole seconds from start to completion (or `now` while unfinished); 0 before the start. */
export function durationSeconds(row: Pick<WorkloadRow, 'started_at' | 'completed_at'>, now: number): number {
  if (row.started_at === null) return 0;
  return Math.floor(Math.max(0, (row.completed_at ?? now) - row.started_at) / 1000);
}

/** A finished workload is read at its completion time, so its GPU-hours stop growing. */
export function gpuHoursAt(row: GpuAggregates & Pick<WorkloadRow, 'completed_at'>, now: number): number {
  const t = (row.completed_at ?? now) / 1000;
  return Math.max(0, row.gpu_seconds_closed + row.open_gpus * t - row.open_gpu_start_sum) / 3600;
}
