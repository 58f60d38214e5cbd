// What a mapper returns, and the part of a row every kind fills the same way.
import type { PodGpuInterval, WorkloadKind, WorkloadRecord } from '../domain/workload.js';
import type { ObjectMeta } from './k8s-types.js';
import { initiativeOf, instanceTypeOf, isManagedOf, organizationOf, submittedByOf } from './labels.js';
import type { MappingContext } from './mapping-context.js';
import { timestampMs } from './timestamps.js';
import type { WorkloadState } from './workload-state.js';

/** One workload row and the GPU intervals of its pods. */
export interface MappedWorkload {
  workload: WorkloadRecord;
  intervals: PodGpuInterval[];
}

/** The row of an object with a uid, given its kind, GPU count and state. */
export function workloadRecord(
  meta: ObjectMeta & { uid: string },
  fields: { kind: WorkloadKind; gpuCount: number; state: WorkloadState; context: MappingContext },
): WorkloadRecord {
  const { context, state } = fields;
  const organizationId = organizationOf(context);
  return {
    workloadId: meta.uid,
    organizationId,
    clusterId: context.clusterId,
    namespace: meta.namespace ?? context.namespace?.metadata?.name ?? '',
    name: meta.name ?? '',
    kind: fields.kind,
    status: state.status,
    submittedBy: submittedByOf(meta, context.keys),
    initiativeId: initiativeOf(meta, { ...context, organizationId }),
    instanceType: instanceTypeOf(context.node, context.keys),
    gpuCount: fields.gpuCount,
    submittedAt: timestampMs(meta.creationTimestamp) ?? context.observedAt ?? 0,
    startedAt: state.startedAt,
    completedAt: state.completedAt,
    exitCode: state.exitCode,
    isManaged: isManagedOf(meta, context.keys),
    resourceVersion: meta.resourceVersion ?? '',
  };
}

/** The object's metadata when it has a uid (a workload's id); objects without one cannot be indexed. */
export function withUid(meta: ObjectMeta | undefined): (ObjectMeta & { uid: string }) | null {
  const uid = meta?.uid;
  return meta === undefined || uid === undefined || uid === '' ? null : { ...meta, uid };
}
