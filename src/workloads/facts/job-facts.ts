// One batch Job as the workload caches keep it (see pod-facts.ts): what its row is made of, with its
// status conditions reduced to how, when and why it finished.
import type { FailureReason } from '../../domain/failure-reason.js';
import type { GpuAsk } from '../../k8s/gpus/gpu-ask.js';
import { fromKubeTime } from './kube-time.js';
import { ObjectFacts, type ObjectIdentity, type ObjectTimes } from './object-facts.js';

export interface JobFigures {
  /** GPUs each pod of its template holds; 0: the Job is no workload. */
  gpusPerPod: number;
  /** What each pod of its template asks of GPUs (src/k8s/gpus/gpu-ask.ts). */
  askPerPod: GpuAsk;
  parallelism: number;
  suspended: boolean;
  /** Its Complete or Failed condition that is True (Complete first), if any. */
  finish: 'completed' | 'failed' | null;
  /** The finish condition's lastTransitionTime, else status.completionTime (kube time). */
  finished: number | null;
  /**
   * The reason its Failed condition proves (failure/job-failure-evidence.ts), one of the shared constants of
   * FAILURE_REASONS, so no Job holds a string of its own; null when it did not fail or says nothing.
   */
  failedBy: FailureReason | null;
}

export class JobFacts extends ObjectFacts {
  readonly gpusPerPod: number;
  readonly askPerPod: GpuAsk;
  readonly parallelism: number;
  readonly suspended: boolean;
  readonly finish: 'completed' | 'failed' | null;
  readonly finished: number | null;
  readonly failedBy: FailureReason | null;

  constructor(
    identity: ObjectIdentity,
    times: ObjectTimes,
    figures: JobFigures,
  ) {
    super(identity, times);
    this.gpusPerPod = figures.gpusPerPod;
    this.askPerPod = figures.askPerPod;
    this.parallelism = figures.parallelism;
    this.suspended = figures.suspended;
    this.finish = figures.finish;
    this.finished = figures.finished;
    this.failedBy = figures.failedBy;
  }

  /** Whether its pods may hold GPUs: devices their template asks for, or DRA claims. */
  get mayHoldGpus(): boolean {
    return this.gpusPerPod > 0 || this.askPerPod.dra;
  }

  get finishedAt(): number | null {
    return fromKubeTime(this.finished);
  }
}
