// One pod as the workload caches keep it: a single flat record of what the mappers read, with times
// as small integers (kube-time.ts), shared strings for the values many pods have in common, and its
// containers reduced to the figures they give (GPUs held, last finish, exit code, why it failed). An API server's
// Pod is 4-20 KB of JSON and a tree of some twenty objects even when slimmed; this is one object.
import type { GpuAsk } from '../../k8s/gpus/gpu-ask.js';
import { fromKubeTime } from './kube-time.js';
import { ObjectFacts, type ObjectIdentity, type ObjectTimes } from './object-facts.js';

export interface PodFigures {
  /** The owning batch Job's uid; null for a pod of its own. */
  jobUid: string | null;
  nodeName: string | undefined;
  phase: string | undefined;
  /** GPU devices held, as the scheduler counts them (src/k8s/objects/gpu-request.ts), or as KAI's fraction says. */
  gpus: number;
  /** What it asks of GPUs, shared between the pods that ask the same (src/k8s/gpus/gpu-ask.ts). */
  ask: GpuAsk;
  /** The names of the ResourceClaims it uses, as far as its spec and status tell (NO_CLAIMS for most pods). */
  claimNames: readonly string[];
  /** The first non-zero exit code of its terminated containers, init containers first. */
  failedExitCode: number | null;
  /** The latest transition of any of its conditions (kube time). */
  latestTransition: number | null;
  /** The latest finishedAt of its terminated containers (kube time). */
  lastFinish: number | null;
  /** Why it ended, as far as its status proves it: a bit set (failure/pod-failure-evidence.ts), 0 for none. */
  failureHints: number;
}

/** The claim names of a pod that uses none. */
export const NO_CLAIMS: readonly string[] = Object.freeze([]);

export class PodFacts extends ObjectFacts {
  readonly jobUid: string | null;
  readonly nodeName: string | undefined;
  readonly phase: string | undefined;
  readonly gpus: number;
  readonly ask: GpuAsk;
  readonly claimNames: readonly string[];
  readonly failedExitCode: number | null;
  readonly latestTransition: number | null;
  readonly lastFinish: number | null;
  readonly failureHints: number;

  constructor(
    identity: ObjectIdentity,
    times: ObjectTimes,
    figures: PodFigures,
  ) {
    super(identity, times);
    this.jobUid = figures.jobUid;
    this.nodeName = figures.nodeName;
    this.phase = figures.phase;
    this.gpus = figures.gpus;
    this.ask = figures.ask;
    this.claimNames = figures.claimNames;
    this.failedExitCode = figures.failedExitCode;
    this.latestTransition = figures.latestTransition;
    this.lastFinish = figures.lastFinish;
    this.failureHints = figures.failureHints;
  }

  /** Whether it may hold GPUs: devices it asks for, or DRA claims (what they hold is known from the claims). */
  get mayHoldGpus(): boolean {
    return this.gpus > 0 || this.ask.dra;
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
      this,
      { created: this.created, deletionRequested: deletion, started: this.started, observedAt: this.observedAt },
      this,
    );
  }
}
