// One pod as the workload caches keep it: a single flat record of what the mappers read, with times
// as small integers (kube-time.ts), shared strings for the values many pods have in common, and its
// containers reduced to the figures they give (GPUs held, last finish, exit code). An API server's
// Pod is 4-20 KB of JSON and a tree of some twenty objects even when slimmed; this is one object.
import { fromKubeTime } from './kube-time.js';
import type { OwnAttribution } from './attribution.js';

export class PodFacts {
  constructor(
    readonly uid: string,
    readonly name: string,
    readonly namespace: string | undefined,
    readonly resourceVersion: string | undefined,
    /** The owning batch Job's uid; null for a pod of its own. */
    readonly jobUid: string | null,
    readonly nodeName: string | undefined,
    readonly phase: string | undefined,
    /** GPUs held, as the scheduler counts them (gpu-request.ts). */
    readonly gpus: number,
    readonly attribution: OwnAttribution,
    /** The first non-zero exit code of its terminated containers, init containers first. */
    readonly failedExitCode: number | null,
    // Times in kube-time seconds, null when unknown.
    readonly created: number | null,
    /** When its deletion was requested: deletionTimestamp − grace period (deletion.ts). */
    readonly deletionRequested: number | null,
    readonly started: number | null,
    /** The latest transition of any of its conditions. */
    readonly latestTransition: number | null,
    /** The latest finishedAt of its terminated containers. */
    readonly lastFinish: number | null,
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

  get latestTransitionAt(): number | null {
    return fromKubeTime(this.latestTransition);
  }

  get lastFinishAt(): number | null {
    return fromKubeTime(this.lastFinish);
  }

  /** This pod deleted at `deletion` (kube time), unless a deletion was already requested: a tombstone. */
  deletedAt(deletion: number | null): PodFacts {
    if (this.deletionRequested !== null) return this;
    return new PodFacts(
      this.uid, this.name, this.namespace, this.resourceVersion, this.jobUid, this.nodeName, this.phase, this.gpus, this.attribution,
      this.failedExitCode, this.created, deletion, this.started, this.latestTransition, this.lastFinish, this.observedAt,
    );
  }
}
