// A batch/v1 Job whose pod template requests GPUs → its workload row, with its pods' GPU intervals.
// The caller passes the Job's pods (context.pods) and the node its first pod runs on (context.node,
// see firstPodNodeName).
import { effectiveGpuRequest } from './gpu-request.js';
import type { Job, Pod } from './k8s-types.js';
import type { MappingContext } from './mapping-context.js';
import { withUid, workloadRecord, type MappedWorkload } from './mapped-workload.js';
import { podInterval } from './map-pod.js';
import { jobState } from './job-status.js';
import { timestampMs } from './timestamps.js';

/** The node of the Job's earliest-created pod that is scheduled; null when none is. */
export function firstPodNodeName(pods: readonly Pod[]): string | null {
  let first: { node: string; at: number } | null = null;
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (node === undefined || node === '') continue;
    const at = timestampMs(pod.metadata?.creationTimestamp) ?? Number.POSITIVE_INFINITY;
    if (first === null || at < first.at) first = { node, at };
  }
  return first?.node ?? null;
}

/**
 * The workload of a Job; null when its pod template requests no GPU or it has no uid.
 * gpu_count = per-pod request × spec.parallelism (default 1).
 */
export function mapJob(job: Job, context: MappingContext): MappedWorkload | null {
  const meta = withUid(job.metadata);
  if (meta === null) return null;
  const perPod = effectiveGpuRequest(job.spec?.template?.spec, context.gpuResources);
  if (perPod === 0) return null;
  const pods = context.pods ?? [];
  const state = jobState(job, { pods, deleted: context.deleted, observedAt: context.observedAt });
  const gpuCount = perPod * (job.spec?.parallelism ?? 1);
  return {
    workload: workloadRecord(meta, { kind: 'Job', gpuCount, state, context }),
    intervals: pods.map((pod) =>
      // A deleted Job takes its unfinished pods with it: they end at the Job's deletion at the latest.
      podInterval(pod, { workloadId: meta.uid, gpuResources: context.gpuResources, deleted: context.deleted, observedAt: context.observedAt }),
    ),
  };
}
