// Pods and Jobs as the API server sends them → the flat records the caches keep (pod-facts.ts,
// job-facts.ts). Everything a mapper reads is computed here once per version of an object: the GPU
// request, the owning Job, the container figures, the deletion time, the attribution labels, and what
// the status proves of why it failed.
import { Attributions } from '../attribution/own-attribution.js';
import { deletionTime } from './deletion.js';
import { DEFAULT_GPU_RESOURCES } from '../../k8s/objects/gpu-request.js';
import { AskTable, askedDevices, gpuAsk, NO_ASK, type GpuAsk } from '../../k8s/gpus/gpu-ask.js';
import { JobFacts } from './job-facts.js';
import { jobFailedBy } from '../failure/job-failure-evidence.js';
import type { Condition, Job, ObjectMeta, Pod, Timestamp } from '../../k8s/objects/k8s-types.js';
import { toKubeTime } from './kube-time.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from '../attribution/label-keys.js';
import { jobOwnerUid } from '../../k8s/objects/owner.js';
import { firstNonZeroExitCode, lastContainerFinish } from './pod-containers.js';
import type { ObjectIdentity, ObjectTimes } from './object-facts.js';
import { NO_CLAIMS, PodFacts } from './pod-facts.js';
import { podFailureHints } from '../failure/pod-failure-evidence.js';
import { StringTable } from '../../k8s/objects/string-table.js';
import { latestMs, timestampMs } from './timestamps.js';

export interface ProjectionSettings {
  keys?: Readonly<LabelKeys>;
  gpuResources?: readonly string[];
  /**
   * KAI Scheduler's reservation namespace (null: none). Its pods hold the physical GPUs behind KAI's
   * fractions, which the fraction pods are charged for: they hold no GPU of a workload.
   */
  reservationNamespace?: string | null;
}

const kubeTime = (value: Parameters<typeof timestampMs>[0]): number | null => toKubeTime(timestampMs(value));

function timesOf(meta: ObjectMeta | undefined, startTime: Timestamp | undefined, observedAt: number): ObjectTimes {
  return {
    created: kubeTime(meta?.creationTimestamp),
    deletionRequested: toKubeTime(deletionTime(meta)),
    started: kubeTime(startTime),
    observedAt,
  };
}

/** The ResourceClaims a pod uses: those it names, and those made for it from a template as its status says. */
function claimNames(pod: Pod): readonly string[] {
  const made = new Map((pod.status?.resourceClaimStatuses ?? []).map((status) => [status.name, status.resourceClaimName]));
  const names = (pod.spec?.resourceClaims ?? [])
    .map((claim) => claim.resourceClaimName ?? made.get(claim.name))
    .filter((name): name is string => typeof name === 'string' && name !== '');
  return names.length === 0 ? NO_CLAIMS : names;
}

function trueCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type && condition.status === 'True');
}

export class FactsProjection {
  readonly #gpuResources: readonly string[];
  readonly #reservationNamespace: string | null;
  readonly #strings = new StringTable();
  readonly #asks = new AskTable();
  readonly #attributions: Attributions;

  constructor(settings: ProjectionSettings = {}) {
    this.#gpuResources = settings.gpuResources ?? DEFAULT_GPU_RESOURCES;
    this.#reservationNamespace = settings.reservationNamespace ?? null;
    this.#attributions = new Attributions(settings.keys ?? DEFAULT_LABEL_KEYS, this.#strings);
  }

  /** `observedAt`: when this version was first seen (the caches set it again when they keep it). */
  pod(pod: Pod, observedAt = 0): PodFacts {
    const meta = pod.metadata;
    const status = pod.status;
    const strings = this.#strings;
    const ask = meta?.namespace === this.#reservationNamespace ? NO_ASK : this.#asks.intern(gpuAsk(pod, this.#gpuResources));
    return new PodFacts(this.#identity(meta), timesOf(meta, status?.startTime, observedAt), {
      jobUid: jobOwnerUid(meta),
      nodeName: strings.intern(pod.spec?.nodeName),
      phase: strings.intern(status?.phase),
      gpus: askedDevices(ask),
      ask,
      claimNames: ask.dra ? claimNames(pod) : NO_CLAIMS,
      failedExitCode: firstNonZeroExitCode(pod),
      latestTransition: toKubeTime(latestMs((status?.conditions ?? []).map((condition) => timestampMs(condition.lastTransitionTime)))),
      lastFinish: toKubeTime(lastContainerFinish(pod)),
      failureHints: podFailureHints(pod),
    });
  }

  job(job: Job, observedAt = 0): JobFacts {
    const meta = job.metadata;
    const status = job.status;
    const complete = trueCondition(status?.conditions, 'Complete');
    const finishCondition = complete ?? trueCondition(status?.conditions, 'Failed');
    const finish = finishCondition === undefined ? null : complete !== undefined ? 'completed' : 'failed';
    return new JobFacts(this.#identity(meta), timesOf(meta, status?.startTime, observedAt), {
      ...this.#templateAsk(job),
      parallelism: job.spec?.parallelism ?? 1,
      suspended: job.spec?.suspend === true,
      finish,
      finished: finishCondition === undefined ? null : (kubeTime(finishCondition.lastTransitionTime) ?? kubeTime(status?.completionTime)),
      failedBy: finish === 'failed' ? jobFailedBy(finishCondition?.reason) : null,
    });
  }

  /** What each pod of the Job's template asks; nothing in the reservation namespace. */
  #templateAsk(job: Job): { gpusPerPod: number; askPerPod: GpuAsk } {
    if (job.metadata?.namespace === this.#reservationNamespace) return { gpusPerPod: 0, askPerPod: NO_ASK };
    const askPerPod = this.#asks.intern(gpuAsk(job.spec?.template, this.#gpuResources));
    return { gpusPerPod: askedDevices(askPerPod), askPerPod };
  }

  #identity(meta: ObjectMeta | undefined): ObjectIdentity {
    return {
      uid: meta?.uid ?? '',
      name: meta?.name ?? '',
      namespace: this.#strings.intern(meta?.namespace),
      resourceVersion: meta?.resourceVersion,
      attribution: this.#attributions.of(meta),
    };
  }
}
