// Builds valid index rows for tests and benchmarks; override only what a test is about.
import type { PodGpuInterval, WorkloadRecord } from '../../src/domain/workload.js';
import { failureReasonOf } from '../../src/workloads/failure/failure-reason.js';

let sequence = 0;

export function aWorkload(overrides: Partial<WorkloadRecord> = {}): WorkloadRecord {
  sequence += 1;
  const id = overrides.workloadId ?? `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`;
  const record: Omit<WorkloadRecord, 'failureReason'> & Partial<WorkloadRecord> = {
    workloadId: id,
    organizationId: 'acme',
    clusterId: 'local',
    namespace: 'llm-train',
    name: `train-${sequence}`,
    kind: 'Job',
    status: 'completed',
    submittedBy: 'alice',
    initiativeId: 'llm',
    instanceType: 'p5.48xlarge',
    gpuCount: 8,
    submittedAt: Date.parse('2026-11-10T10:00:00Z'),
    startedAt: Date.parse('2026-11-10T10:01:00Z'),
    completedAt: Date.parse('2026-11-10T12:01:00Z'),
    exitCode: 0,
    isManaged: true,
    resourceVersion: '1',
    ...overrides,
  };
  // Unless a test sets it, the reason a failed or cancelled row's own status gives.
  return { ...record, failureReason: 'failureReason' in overrides ? (overrides.failureReason ?? null) : failureReasonOf(record) };
}

/** One pod holding the workload's GPUs from its start to its end (or still running when it has no end). */
export function aPodInterval(workload: WorkloadRecord, overrides: Partial<PodGpuInterval> = {}): PodGpuInterval {
  return {
    podUid: `${workload.workloadId}-pod-0`,
    workloadId: workload.workloadId,
    gpus: workload.gpuCount,
    startedAt: workload.startedAt,
    finishedAt: workload.completedAt,
    ...overrides,
  };
}
