// Pods and Jobs as the API server sends them → the flat records the caches keep (pod-facts.ts,
// job-facts.ts). Everything a mapper reads is computed here once per version of an object: the GPU
// request, the owning Job, the container figures, the deletion time, the attribution labels.
import { Attributions } from './attribution.js';
import { deletionTime } from './deletion.js';
import { effectiveGpuRequest } from './gpu-request.js';
import { JobFacts } from './job-facts.js';
import type { Condition, Job, Pod } from './k8s-types.js';
import { toKubeTime } from './kube-time.js';
import { DEFAULT_GPU_RESOURCES, DEFAULT_LABEL_KEYS, type LabelKeys } from './mapping-context.js';
import { jobOwnerUid } from './owner.js';
import { firstNonZeroExitCode, lastContainerFinish } from './pod-containers.js';
import { PodFacts } from './pod-facts.js';
import { StringTable } from './string-table.js';
import { latestMs, timestampMs } from './timestamps.js';

export interface ProjectionSettings {
  keys?: Readonly<LabelKeys>;
  gpuResources?: readonly string[];
}

const kubeTime = (value: Parameters<typeof timestampMs>[0]): number | null => toKubeTime(timestampMs(value));

function trueCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type && condition.status === 'True');
}

export class FactsProjection {
  readonly #gpuResources: readonly string[];
  readonly #strings = new StringTable();
  readonly #attributions: Attributions;

  constructor(settings: ProjectionSettings = {}) {
    this.#gpuResources = settings.gpuResources ?? DEFAULT_GPU_RESOURCES;
    this.#attributions = new Attributions(settings.keys ?? DEFAULT_LABEL_KEYS, this.#strings);
  }

  /** `observedAt`: when this version was first seen (the caches set it again when they keep it). */
  pod(pod: Pod, observedAt = 0): PodFacts {
    const meta = pod.metadata;
    const status = pod.status;
    const strings = this.#strings;
    return new PodFacts(
      meta?.uid ?? '',
      meta?.name ?? '',
      strings.intern(meta?.namespace),
      meta?.resourceVersion,
      jobOwnerUid(meta),
      strings.intern(pod.spec?.nodeName),
      strings.intern(status?.phase),
      effectiveGpuRequest(pod.spec, this.#gpuResources),
      this.#attributions.of(meta),
      firstNonZeroExitCode(pod),
      kubeTime(meta?.creationTimestamp),
      toKubeTime(deletionTime(meta)),
      kubeTime(status?.startTime),
      toKubeTime(latestMs((status?.conditions ?? []).map((condition) => timestampMs(condition.lastTransitionTime)))),
      toKubeTime(lastContainerFinish(pod)),
      observedAt,
    );
  }

  job(job: Job, observedAt = 0): JobFacts {
    const meta = job.metadata;
    const status = job.status;
    const complete = trueCondition(status?.conditions, 'Complete');
    const finishCondition = complete ?? trueCondition(status?.conditions, 'Failed');
    const finish = finishCondition === undefined ? null : complete !== undefined ? 'completed' : 'failed';
    return new JobFacts(
      meta?.uid ?? '',
      meta?.name ?? '',
      this.#strings.intern(meta?.namespace),
      meta?.resourceVersion,
      this.#attributions.of(meta),
      effectiveGpuRequest(job.spec?.template?.spec, this.#gpuResources),
      job.spec?.parallelism ?? 1,
      job.spec?.suspend === true,
      finish,
      finishCondition === undefined ? null : (kubeTime(finishCondition.lastTransitionTime) ?? kubeTime(status?.completionTime)),
      kubeTime(meta?.creationTimestamp),
      toKubeTime(deletionTime(meta)),
      kubeTime(status?.startTime),
      observedAt,
    );
  }
}
