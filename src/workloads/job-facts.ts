// One batch Job as the workload caches keep it (see pod-facts.ts): what its row is made of, with its
// status conditions reduced to how and when it finished.
import { fromKubeTime } from './kube-time.js';
import type { OwnAttribution } from './attribution.js';

export class JobFacts {
  constructor(
    readonly uid: string,
    readonly name: string,
    readonly namespace: string | undefined,
    readonly resourceVersion: string | undefined,
    readonly attribution: OwnAttribution,
    /** GPUs each pod of its template holds; 0: the Job is no workload. */
    readonly gpusPerPod: number,
    readonly parallelism: number,
    readonly suspended: boolean,
    /** Its Complete or Failed condition that is True (Complete first), if any. */
    readonly finish: 'completed' | 'failed' | null,
    // Times in kube-time seconds, null when unknown.
    /** The finish condition's lastTransitionTime, else status.completionTime. */
    readonly finished: number | null,
    readonly created: number | null,
    readonly deletionRequested: number | null,
    readonly started: number | null,
    /** When the service first saw this version of it (epoch ms; see seen.ts). */
    public observedAt: number,
  ) {}

  get createdAt(): number | null {
    return fromKubeTime(this.created);
  }

  get deletionRequestedAt(): number | null {
    return fromKubeTime(this.deletionRequested);
  }

  get startedAt(): number | null {
    return fromKubeTime(this.started);
  }

  get finishedAt(): number | null {
    return fromKubeTime(this.finished);
  }
}
