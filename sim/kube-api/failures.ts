// How a simulated Job's pod fails, in the status shapes Kubernetes writes for each cause (the same
// shapes as test/fixtures/kubernetes/, SOURCES.md there): the demo's failed Jobs then show the
// service's failure reasons (docs/workloads.md "Why a workload failed") rather than one exit code.

export const FAILURE_SHAPES = ['oom_killed', 'backoff_limit', 'deadline', 'pod_failure_policy', 'evicted', 'preempted', 'node_lost'] as const;
export type FailureShape = (typeof FAILURE_SHAPES)[number];

const iso = (ms: number): string => new Date(ms).toISOString();

interface PodEnd {
  /** The container's exit code and runtime reason; none when its node vanished before it reported one. */
  exit?: { code: number; reason: string };
  /** status.reason and message the kubelet writes. */
  podReason?: { reason: string; message: string };
  /** The DisruptionTarget condition's reason and message. */
  disruption?: { reason: string; message: string };
}

const POD_ENDS: Record<FailureShape, PodEnd> = {
  oom_killed: { exit: { code: 137, reason: 'OOMKilled' } },
  backoff_limit: { exit: { code: 1, reason: 'Error' } },
  // The Job controller deletes the pod at the Job's deadline: SIGTERM.
  deadline: { exit: { code: 143, reason: 'Error' } },
  pod_failure_policy: { exit: { code: 42, reason: 'Error' } },
  evicted: {
    exit: { code: 137, reason: 'Error' },
    podReason: { reason: 'Evicted', message: 'The node was low on resource: memory. ' },
    disruption: { reason: 'TerminationByKubelet', message: 'The node was low on resource: memory. ' },
  },
  preempted: {
    exit: { code: 143, reason: 'Error' },
    disruption: { reason: 'PreemptionByScheduler', message: 'default-scheduler: preempting to accommodate a higher priority pod' },
  },
  // PodGC marks the pod of a vanished node Failed; its container never reported stopping.
  node_lost: { disruption: { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' } },
};

/** Pod status of a Job's pod that ran from `startedAt` and failed at `finishedAt` the way `shape` says. */
export function failedPodStatus(shape: FailureShape, startedAt: number, finishedAt: number): Record<string, unknown> {
  const end = POD_ENDS[shape];
  const state = end.exit === undefined
    ? { running: { startedAt: iso(startedAt) } }
    : { terminated: { exitCode: end.exit.code, reason: end.exit.reason, startedAt: iso(startedAt), finishedAt: iso(finishedAt) } };
  return {
    phase: 'Failed',
    ...(end.podReason ?? {}),
    startTime: iso(startedAt),
    ...(end.disruption === undefined
      ? {}
      : { conditions: [{ type: 'DisruptionTarget', status: 'True', ...end.disruption, lastTransitionTime: iso(finishedAt) }] }),
    containerStatuses: [{ name: 'main', state }],
  };
}

/** The Failed condition the Job controller writes at `at` once the Job's pod `podName` failed the way `shape` says. */
export function jobFailedCondition(shape: FailureShape, at: number, podName: string): Record<string, unknown> {
  const failed = (reason: string, message: string) => ({ type: 'Failed', status: 'True', reason, message, lastTransitionTime: iso(at) });
  if (shape === 'deadline') return failed('DeadlineExceeded', 'Job was active longer than specified deadline');
  if (shape === 'pod_failure_policy') return failed('PodFailurePolicy', `Container main for pod ${podName} failed with exit code 42 matching FailJob rule at index 0`);
  // One pod and a backoff limit used up, whatever ended the pod.
  return failed('BackoffLimitExceeded', 'Job has reached the specified backoff limit');
}

/** A shape for a Job, from its name: the same Job fails the same way in every run, and no random draw is spent. */
export function failureShapeOf(name: string): FailureShape {
  return FAILURE_SHAPES[nameHash(name) % FAILURE_SHAPES.length] as FailureShape;
}

/** A stable number of a name: what the demo decides by it needs no random draw. */
export function nameHash(name: string): number {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash;
}
