// What a mapper returns, and the part of a row every kind fills the same way.
import type { FailureReason } from '../../domain/failure-reason.js';
import type { PodGpuInterval, WorkloadKind, WorkloadRecord } from '../../domain/workload.js';
import type { OwnAttribution } from '../attribution/own-attribution.js';
import { failureReasonOf } from '../failure/failure-reason.js';
import { capacityTypeOf, initiativeFrom, instanceTypeOf, organizationOf } from '../attribution/labels.js';
import type { MappingContext } from './mapping-context.js';
import type { WorkloadState } from './workload-state.js';
import type { WorkloadShare } from './workload-share.js';

/** One workload row and the GPU intervals of its pods. */
export interface MappedWorkload {
  workload: WorkloadRecord;
  intervals: PodGpuInterval[];
}

/** What a row takes from the object a workload is (a Pod or a Job, as the caches keep it). */
export interface WorkloadObject {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly createdAt: number | null;
  readonly attribution: OwnAttribution;
}

/**
 * The row of an object with a uid, given its kind, GPU count and state, and what the object says of
 * why it failed (failure/failure-reason.ts).
 */
export function workloadRecord(
  object: WorkloadObject,
  fields: {
    kind: WorkloadKind;
    gpuCount: number;
    /** How its GPUs were counted; absent: not counted (every device whole). */
    share?: WorkloadShare;
    state: WorkloadState;
    context: MappingContext;
    failureEvidence?: readonly FailureReason[];
  },
): WorkloadRecord {
  const { context, state } = fields;
  const { attribution } = object;
  const organizationId = organizationOf(context);
  return {
    workloadId: object.uid,
    organizationId,
    clusterId: context.clusterId,
    namespace: object.namespace ?? context.namespace?.metadata?.name ?? '',
    name: object.name,
    kind: fields.kind,
    status: state.status,
    submittedBy: attribution.submittedBy,
    initiativeId: initiativeFrom({ own: attribution.initiative, namespace: object.namespace }, { ...context, organizationId }),
    instanceType: instanceTypeOf(context.node, context.keys),
    capacityType: capacityTypeOf(context.node, context.keys),
    gpuCount: fields.gpuCount,
    ...fields.share,
    submittedAt: object.createdAt ?? context.observedAt ?? 0,
    startedAt: state.startedAt,
    completedAt: state.completedAt,
    exitCode: state.exitCode,
    failureReason: failureReasonOf(state, fields.failureEvidence),
    isManaged: attribution.isManaged,
    resourceVersion: object.resourceVersion ?? '',
  };
}
