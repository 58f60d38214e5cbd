// Why a workload failed (docs/workloads.md "Why a workload failed"), from Pod and Job status shapes
// as Kubernetes writes them (test/fixtures/kubernetes/SOURCES.md), through the path the service takes:
// the watch decoder's field selection, the cached facts, then the mappers.
import { expect } from 'chai';
import { selectFields } from '../../../src/domain/field-selection.js';
import { FAILURE_REASONS, type FailureReason } from '../../../src/domain/failure-reason.js';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import { failureReasonOf } from '../../../src/workloads/failure/failure-reason.js';
import type { Job, Pod } from '../../../src/k8s/objects/k8s-types.js';
import { mapJob } from '../../../src/workloads/mapping/map-job.js';
import { mapPod } from '../../../src/workloads/mapping/map-pod.js';
import type { MappingContext } from '../../../src/workloads/mapping/mapping-context.js';
import { DEFAULT_LABEL_KEYS } from '../../../src/workloads/attribution/label-keys.js';
import { readFields } from '../../../src/workloads/read-fields.js';
import { jobFixture, podFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';
import { aContext, jobFacts, podFacts } from '../fixtures.js';

type Outcome = Pick<WorkloadRecord, 'status' | 'exitCode' | 'failureReason'>;

const FIELDS = readFields(DEFAULT_LABEL_KEYS);
const selectedPod = (pod: Pod): Pod => selectFields(pod, FIELDS.pods) as Pod;

function outcome(record: WorkloadRecord | undefined): Outcome {
  if (record === undefined) throw new Error('not a workload');
  return { status: record.status, exitCode: record.exitCode, failureReason: record.failureReason };
}

/** A standalone pod's row, as the service maps the pod it decoded. */
function podOutcome(pod: Pod, context: Partial<MappingContext> = {}): Outcome {
  return outcome(mapPod(podFacts(selectedPod(pod)), aContext(context))?.workload);
}

/** A Job's row with its pods, as the service maps the objects it decoded. */
function jobOutcome(job: Job, pods: readonly Pod[], context: Partial<MappingContext> = {}): Outcome {
  const selected = selectFields(job, FIELDS.jobs) as Job;
  return outcome(mapJob(jobFacts(selected), aContext({ ...context, pods: pods.map((pod) => podFacts(selectedPod(pod))) }))?.workload);
}

const podOf = (name: string, context?: Partial<MappingContext>): Outcome => podOutcome(podFixture(name), context);
const jobOf = (name: string): Outcome => {
  const { job, pods } = jobFixture(name);
  return jobOutcome(job, pods);
};

/** A deep copy of a fixture to change for one row. */
const copy = <T>(value: T): T => structuredClone(value);

/** `job` with its FailureTarget and Failed conditions moved to `at`. */
function failedAt(job: Job, at: string): Job {
  const moved = copy(job);
  for (const condition of moved.status?.conditions ?? []) condition.lastTransitionTime = at;
  return moved;
}

/** `pod` made a pod of the Job of `like` (its name, uid and owner), keeping its own deletion. */
function asPodOf(pod: Pod, like: Pod | undefined): Pod {
  const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata ?? {};
  return { ...copy(pod), metadata: { ...like?.metadata, deletionTimestamp, deletionGracePeriodSeconds } };
}

describe('workloads: failure_reason, one rule per status shape', () => {
  const rows: { rule: string; fixture: string; kind: 'Pod' | 'Job'; expected: Outcome }[] = [
    { rule: 'a container terminated OOMKilled → oom_killed', fixture: 'pod-oom-killed.json', kind: 'Pod', expected: { status: 'failed', exitCode: 137, failureReason: 'oom_killed' } },
    { rule: 'kubelet node-pressure eviction (status.reason Evicted) → evicted', fixture: 'pod-evicted-by-kubelet.json', kind: 'Pod', expected: { status: 'failed', exitCode: 137, failureReason: 'evicted' } },
    { rule: 'Eviction API (DisruptionTarget EvictionByEvictionAPI), the pod deleted → evicted', fixture: 'pod-evicted-by-api.json', kind: 'Pod', expected: { status: 'cancelled', exitCode: 143, failureReason: 'evicted' } },
    { rule: 'scheduler preemption (DisruptionTarget PreemptionByScheduler) → preempted', fixture: 'pod-preempted-by-scheduler.json', kind: 'Pod', expected: { status: 'cancelled', exitCode: 143, failureReason: 'preempted' } },
    { rule: 'kubelet preemption for a critical pod (status.reason Preempting) → preempted', fixture: 'pod-preempted-by-kubelet.json', kind: 'Pod', expected: { status: 'failed', exitCode: 137, failureReason: 'preempted' } },
    { rule: 'taint-manager deletion (DisruptionTarget DeletionByTaintManager) → node_lost', fixture: 'pod-deleted-by-taint-manager.json', kind: 'Pod', expected: { status: 'cancelled', exitCode: 0, failureReason: 'node_lost' } },
    { rule: 'PodGC of a pod on a gone node (DisruptionTarget DeletionByPodGC) → node_lost', fixture: 'pod-deleted-by-podgc.json', kind: 'Pod', expected: { status: 'failed', exitCode: 0, failureReason: 'node_lost' } },
    { rule: 'graceful node shutdown (status.reason Terminated) → node_lost', fixture: 'pod-node-shutdown.json', kind: 'Pod', expected: { status: 'failed', exitCode: 143, failureReason: 'node_lost' } },
    { rule: 'the node controller of older releases (status.reason NodeLost) → node_lost', fixture: 'pod-node-lost.json', kind: 'Pod', expected: { status: 'cancelled', exitCode: 0, failureReason: 'node_lost' } },
    { rule: 'phase Unknown (the node stopped reporting), then deleted → node_lost', fixture: 'pod-phase-unknown.json', kind: 'Pod', expected: { status: 'cancelled', exitCode: 0, failureReason: 'node_lost' } },
    { rule: 'activeDeadlineSeconds (status.reason DeadlineExceeded) → deadline_exceeded', fixture: 'pod-active-deadline.json', kind: 'Pod', expected: { status: 'failed', exitCode: 137, failureReason: 'deadline_exceeded' } },
    { rule: 'a plain non-zero exit → nonzero_exit', fixture: 'pod-nonzero-exit.json', kind: 'Pod', expected: { status: 'failed', exitCode: 1, failureReason: 'nonzero_exit' } },
    { rule: 'a running pod deleted → deleted', fixture: 'pod-deleted-while-running.json', kind: 'Pod', expected: { status: 'cancelled', exitCode: 0, failureReason: 'deleted' } },
    { rule: 'rejected at admission (no GPU left on the node), no container ran → unknown', fixture: 'pod-admission-rejected.json', kind: 'Pod', expected: { status: 'failed', exitCode: 0, failureReason: 'unknown' } },
    { rule: 'Job Failed BackoffLimitExceeded → backoff_limit_exceeded', fixture: 'job-backoff-limit-exceeded.json', kind: 'Job', expected: { status: 'failed', exitCode: 1, failureReason: 'backoff_limit_exceeded' } },
    { rule: 'Job Failed DeadlineExceeded → deadline_exceeded', fixture: 'job-deadline-exceeded.json', kind: 'Job', expected: { status: 'failed', exitCode: 143, failureReason: 'deadline_exceeded' } },
    { rule: 'Job Failed PodFailurePolicy: the matching pod tells the cause, here its exit code → nonzero_exit', fixture: 'job-pod-failure-policy.json', kind: 'Job', expected: { status: 'failed', exitCode: 42, failureReason: 'nonzero_exit' } },
  ];
  for (const row of rows) {
    it(`${row.rule} (${row.fixture})`, () => {
      expect(row.kind === 'Pod' ? podOf(row.fixture) : jobOf(row.fixture)).to.deep.equal(row.expected);
    });
  }
});

describe('workloads: failure_reason, what else a Job or Pod says', () => {
  const backoff = jobFixture('job-backoff-limit-exceeded.json');
  const withFailedReason = (reason: string): Job => {
    const job = copy(backoff.job);
    for (const condition of job.status?.conditions ?? []) (condition as { reason?: string }).reason = reason;
    return job;
  };

  it('backoffLimitPerIndex: MaxFailedIndexesExceeded and FailedIndexes are the backoff limit, counted per index', () => {
    for (const reason of ['MaxFailedIndexesExceeded', 'FailedIndexes']) {
      expect(jobOutcome(withFailedReason(reason), backoff.pods).failureReason, reason).to.equal('backoff_limit_exceeded');
    }
  });

  it('a Job whose pods are gone keeps the reason of its Failed condition', () => {
    expect(jobOutcome(backoff.job, [])).to.deep.equal({ status: 'failed', exitCode: 0, failureReason: 'backoff_limit_exceeded' });
  });

  it('a Failed reason the service does not know, with its pods gone, is unknown', () => {
    expect(jobOutcome(withFailedReason('SomethingNew'), [])).to.deep.equal({ status: 'failed', exitCode: 0, failureReason: 'unknown' });
  });

  it('a running Job deleted is deleted, whatever its earlier, retried pods proved', () => {
    const job = copy(backoff.job);
    job.status = { startTime: '2026-11-20T10:00:01Z' };
    const evicted = asPodOf(podFixture('pod-evicted-by-kubelet.json'), backoff.pods[0]);
    expect(jobOutcome(job, [evicted], { deleted: { at: Date.parse('2026-11-20T11:00:00Z') } }).failureReason).to.equal('deleted');
  });

  it("a Job's last attempt lost with its node (PodGC, no container finish) is node_lost", () => {
    const lost = asPodOf(podFixture('pod-deleted-by-podgc.json'), backoff.pods[1]);
    expect(jobOutcome(failedAt(backoff.job, '2026-11-20T11:21:00Z'), [backoff.pods[0] as Pod, lost])).to.deep.equal({
      status: 'failed', exitCode: 1, failureReason: 'node_lost',
    });
  });

  it("a Job's last attempt deleted by the taint manager on an unreachable node is node_lost", () => {
    const lost = asPodOf(podFixture('pod-deleted-by-taint-manager.json'), backoff.pods[1]);
    expect(jobOutcome(failedAt(backoff.job, '2026-11-20T11:11:00Z'), [backoff.pods[0] as Pod, lost]).failureReason).to.equal('node_lost');
  });

  it('pods that ended after the Job failed do not change its reason: the controller killed them, or the garbage collector', () => {
    const { job, pods } = jobFixture('job-oom-backoff-limit-exceeded.json');
    // A parallel pod the Job controller killed once the OOMKilled one failed the Job (before 1.31 the
    // Failed condition came first), and a pod lost earlier that the garbage collector deleted later.
    const killed = asPodOf(podFixture('pod-evicted-by-api.json'), pods[0]);
    const lostThenCollected = asPodOf(podFixture('pod-deleted-by-podgc.json'), pods[0]);
    if (lostThenCollected.status !== undefined) lostThenCollected.status.conditions = [];
    expect(jobOutcome(job, [pods[1] as Pod, killed, lostThenCollected]).failureReason).to.equal('oom_killed');
  });

  it('a DisruptionTarget condition that is not True proves nothing', () => {
    const pod = copy(podFixture('pod-deleted-by-taint-manager.json'));
    for (const condition of pod.status?.conditions ?? []) if (condition.type === 'DisruptionTarget') (condition as { status: string }).status = 'False';
    expect(podOutcome(pod).failureReason).to.equal('deleted');
  });

  it('a DisruptionTarget reason the service does not know proves nothing', () => {
    const pod = copy(podFixture('pod-deleted-by-taint-manager.json'));
    for (const condition of pod.status?.conditions ?? []) if (condition.type === 'DisruptionTarget') condition.reason = 'DeletionByDeviceTaintManager';
    expect(podOutcome(pod).failureReason).to.equal('deleted');
  });

  it('a status.reason that names an object property proves nothing', () => {
    const pod = copy(podFixture('pod-nonzero-exit.json'));
    if (pod.status !== undefined) pod.status.reason = 'constructor';
    expect(podOutcome(pod).failureReason).to.equal('nonzero_exit');
  });

  it('the 1.25 name of scheduler preemption, PreemptionByKubeScheduler, is preemption', () => {
    const pod = copy(podFixture('pod-preempted-by-scheduler.json'));
    for (const condition of pod.status?.conditions ?? []) if (condition.type === 'DisruptionTarget') condition.reason = 'PreemptionByKubeScheduler';
    expect(podOutcome(pod).failureReason).to.equal('preempted');
  });

  it('an OOMKilled init container is oom_killed', () => {
    const pod = copy(podFixture('pod-oom-killed.json'));
    const status = pod.status ?? {};
    pod.status = { ...status, initContainerStatuses: status.containerStatuses, containerStatuses: [{ name: 'main', state: {} }] };
    expect(podOutcome(pod)).to.deep.equal({ status: 'failed', exitCode: 137, failureReason: 'oom_killed' });
  });

  it('only failed and cancelled workloads have a reason: a completed pod has none, whatever its containers said', () => {
    const pod = copy(podFixture('pod-oom-killed.json'));
    if (pod.status !== undefined) pod.status.phase = 'Succeeded';
    expect(podOutcome(pod).failureReason).to.equal(null);
  });
});

/** The OOMKilled pod, restarted in place (restartPolicy OnFailure): its last run OOMKilled, now back-off waiting. */
function crashLoopingAfterOom(): Pod {
  const pod = copy(podFixture('pod-oom-killed.json'));
  const [main] = pod.status?.containerStatuses ?? [];
  const terminated = main?.state?.terminated;
  pod.spec = { ...pod.spec, restartPolicy: 'OnFailure' } as Pod['spec'];
  pod.status = { ...pod.status, phase: 'Running', containerStatuses: [{ name: 'main', state: { waiting: { reason: 'CrashLoopBackOff' } } as never, lastState: { terminated } }] };
  return pod;
}

describe('workloads: failure_reason, precedence when a workload proves several', () => {
  const rows: { pair: string; outcome: () => Outcome; expected: FailureReason }[] = [
    { pair: 'preempted over evicted: the kubelet preempts with TerminationByKubelet', outcome: () => podOf('pod-preempted-by-kubelet.json'), expected: 'preempted' },
    { pair: 'node_lost over evicted: node shutdown comes with TerminationByKubelet', outcome: () => podOf('pod-node-shutdown.json'), expected: 'node_lost' },
    { pair: 'evicted over deleted: the Eviction API deletes the pod', outcome: () => podOf('pod-evicted-by-api.json'), expected: 'evicted' },
    { pair: 'preempted over deleted: the scheduler deletes the pod', outcome: () => podOf('pod-preempted-by-scheduler.json'), expected: 'preempted' },
    { pair: 'node_lost over deleted: the taint manager deletes the pod', outcome: () => podOf('pod-deleted-by-taint-manager.json'), expected: 'node_lost' },
    {
      pair: 'deleted over oom_killed: a crash-looping pod deleted by its owner',
      outcome: () => podOutcome(crashLoopingAfterOom(), { deleted: { at: Date.parse('2026-11-20T10:40:00Z') } }),
      expected: 'deleted',
    },
    {
      pair: 'oom_killed over deadline_exceeded: a crash-looping pod that then ran out of its deadline',
      outcome: () => {
        const pod = crashLoopingAfterOom();
        pod.status = { ...pod.status, phase: 'Failed', reason: 'DeadlineExceeded' };
        return podOutcome(pod);
      },
      expected: 'oom_killed',
    },
    { pair: 'oom_killed over backoff_limit_exceeded: the last pod of the Job was OOMKilled', outcome: () => jobOf('job-oom-backoff-limit-exceeded.json'), expected: 'oom_killed' },
    {
      pair: 'evicted over backoff_limit_exceeded: the last pod of the Job was evicted',
      outcome: () => {
        const { job, pods } = jobFixture('job-backoff-limit-exceeded.json');
        const evicted = asPodOf(podFixture('pod-evicted-by-kubelet.json'), pods[1]);
        return jobOutcome(failedAt(job, '2026-11-20T10:41:00Z'), [pods[0] as Pod, evicted]);
      },
      expected: 'evicted',
    },
    { pair: 'deadline_exceeded over nonzero_exit: a pod past its deadline exits 137', outcome: () => podOf('pod-active-deadline.json'), expected: 'deadline_exceeded' },
    { pair: "deadline_exceeded over nonzero_exit: a Job past its deadline, its pod's exit 143", outcome: () => jobOf('job-deadline-exceeded.json'), expected: 'deadline_exceeded' },
    { pair: 'backoff_limit_exceeded over nonzero_exit: the Job used up its retries of exit 1', outcome: () => jobOf('job-backoff-limit-exceeded.json'), expected: 'backoff_limit_exceeded' },
  ];
  for (const row of rows) {
    it(row.pair, () => {
      expect(row.outcome().failureReason).to.equal(row.expected);
    });
  }

  it('of any two reasons, the one earlier in FAILURE_REASONS wins, in either order', () => {
    // Exit code 0 and failed: no fallback joins the two.
    const failed = { status: 'failed' as const, startedAt: 1, completedAt: 2, exitCode: 0 };
    FAILURE_REASONS.forEach((first, i) => {
      for (const second of FAILURE_REASONS.slice(i + 1)) {
        expect(failureReasonOf(failed, [second, first]), `${first} vs ${second}`).to.equal(first);
        expect(failureReasonOf(failed, [first, second]), `${second} vs ${first}`).to.equal(first);
      }
    });
  });
});
