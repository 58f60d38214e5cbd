// What the indexer keeps of a Pod or Job: the flat records the mappers read (the mapper tables check
// that they give the rows DECISIONS asks for), and nothing of what an API server sends besides.
import { expect } from 'chai';
import { FactsProjection } from '../../../src/workloads/facts/facts-projection.js';
import { NO_CLAIMS } from '../../../src/workloads/facts/pod-facts.js';
import { tombstone } from '../../../src/workloads/caches/job-pod-cache.js';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from '../../../src/workloads/attribution/label-keys.js';
import { podFailureEvidence } from '../../../src/workloads/failure/pod-failure-evidence.js';
import { podState } from '../../../src/workloads/mapping/pod-status.js';
import { aJob, aPod, gpuContainer, ms, terminated } from '../fixtures.js';
import { podFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';

/** A pod as an API server sends it: the mapped fields plus the bulk nothing reads. */
function aFullPod(): Pod {
  const bulky = {
    image: 'nvcr.io/nvidia/pytorch:24.10-py3',
    env: Array.from({ length: 40 }, (_, i) => ({ name: `VAR_${i}`, value: 'x'.repeat(60) })),
    volumeMounts: [{ name: 'data', mountPath: '/data' }],
    livenessProbe: { httpGet: { path: '/healthz', port: 8080 } },
  };
  return {
    metadata: {
      name: 'train-0', namespace: 'llm', uid: 'u1', resourceVersion: '42', creationTimestamp: '2026-11-20T10:00:00Z',
      labels: { 'gpucap.io/initiative': 'llm', 'app.kubernetes.io/name': 'trainer', 'pod-template-hash': 'abc' },
      annotations: { 'gpucap.io/submitted-by': 'alice', 'kubectl.kubernetes.io/last-applied-configuration': 'y'.repeat(4000) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: 'job-1', controller: true }],
    },
    spec: { nodeName: 'gpu-1', containers: [{ ...gpuContainer(8), ...bulky }], volumes: [{ name: 'data' }], tolerations: [{ key: 'nvidia.com/gpu' }] } as Pod['spec'],
    status: {
      phase: 'Failed', startTime: '2026-11-20T10:01:00Z',
      containerStatuses: [{ ...terminated(3, '2026-11-20T11:00:00Z'), imageID: 'sha256:'.padEnd(71, '0') } as never],
    },
  };
}

/** Every own value of the record: nothing but primitives and the shared attribution. */
function ownValues(record: object): unknown[] {
  return Object.values(record);
}

describe('workloads: the records the indexer keeps', () => {
  it('keeps of a full pod what the mappers read, as figures, and no part of the object', () => {
    const facts = new FactsProjection().pod(aFullPod(), 5);
    expect(facts).to.include({
      uid: 'u1', name: 'train-0', namespace: 'llm', resourceVersion: '42', jobUid: 'job-1', nodeName: 'gpu-1', phase: 'Failed',
      gpus: 8, failedExitCode: 3, observedAt: 5,
    });
    expect(facts.attribution).to.deep.equal({ initiative: 'llm', submittedBy: 'alice', isManaged: false });
    expect([facts.createdAt, facts.startedAt, facts.lastFinishAt, facts.deletionRequestedAt]).to.deep.equal([
      ms('2026-11-20T10:00:00Z'), ms('2026-11-20T10:01:00Z'), ms('2026-11-20T11:00:00Z'), null,
    ]);
    // Its objects are shared with every pod of the same attribution and the same GPU ask.
    const projection = new FactsProjection();
    const [one, two] = [projection.pod(aFullPod()), projection.pod({ ...aFullPod(), metadata: { ...aFullPod().metadata, uid: 'u2' } })];
    expect(two.ask).to.equal(one.ask);
    for (const value of ownValues(facts)) if (typeof value === 'object' && value !== null) expect([facts.attribution, facts.ask, NO_CLAIMS]).to.include(value);
  });

  it('keeps times as whole seconds that fit a small integer, and a time with milliseconds exactly', () => {
    const facts = new FactsProjection().pod(aPod({ metadata: { creationTimestamp: '2026-11-20T10:00:00Z' }, status: { phase: 'Running', startTime: '2026-11-20T10:00:01.250Z' } }));
    expect(Number.isInteger(facts.created)).to.equal(true);
    expect(Math.abs(facts.created ?? Infinity)).to.be.below(2 ** 30);
    expect(facts.startedAt).to.equal(ms('2026-11-20T10:00:01.250Z'));
  });

  it('reads the label keys the service is configured with, not the defaults', () => {
    const keys: LabelKeys = { ...DEFAULT_LABEL_KEYS, initiative: 'example.com/team' };
    const pod = aPod({ metadata: { labels: { 'example.com/team': 'vision', 'gpucap.io/initiative': 'llm' } } });
    expect(new FactsProjection({ keys }).pod(pod).attribution.initiative).to.equal('vision');
  });

  it('shares one attribution record between objects that carry the same labels', () => {
    const projection = new FactsProjection();
    const labels = { 'gpucap.io/initiative': 'llm', 'gpucap.io/submitted-by': 'alice' };
    const a = projection.pod(JSON.parse(JSON.stringify(aPod({ metadata: { uid: 'a', labels } }))) as Pod);
    const b = projection.pod(JSON.parse(JSON.stringify(aPod({ metadata: { uid: 'b', labels } }))) as Pod);
    const job = projection.job(aJob({ metadata: { labels } }));
    expect(a.attribution).to.equal(b.attribution);
    expect(job.attribution).to.equal(a.attribution);
    expect(projection.pod(aPod({ metadata: { uid: 'c' } })).attribution).to.not.equal(a.attribution);
  });

  it("keeps of a pod's conditions the latest transition, which a finished pod's end falls back on", () => {
    const conditions = [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-20T10:00:05Z' },
      { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-20T12:30:00Z' },
      { type: 'Initialized', status: 'True', lastTransitionTime: 'not a time' },
    ];
    const facts = new FactsProjection().pod(aPod({ status: { phase: 'Succeeded', startTime: '2026-11-20T10:01:00Z', conditions } }));
    expect(facts.latestTransitionAt).to.equal(ms('2026-11-20T12:30:00Z'));
    expect(podState(facts)).to.include({ status: 'completed', completedAt: ms('2026-11-20T12:30:00Z') });
  });

  it('reads how and when a Job finished from its conditions, Complete before Failed', () => {
    const done = '2026-11-20T11:00:00Z';
    const projection = new FactsProjection();
    const both = projection.job(aJob({ status: { conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: done }, { type: 'Complete', status: 'True' }], completionTime: '2026-11-20T11:05:00Z' } }));
    expect([both.finish, both.finishedAt]).to.deep.equal(['completed', ms('2026-11-20T11:05:00Z')]);
    const failed = projection.job(aJob({ status: { conditions: [{ type: 'Complete', status: 'False' }, { type: 'Failed', status: 'True', lastTransitionTime: done }] } }));
    expect([failed.finish, failed.finishedAt]).to.deep.equal(['failed', ms(done)]);
    expect(projection.job(aJob({ spec: { parallelism: 4, suspend: true } }))).to.include({ parallelism: 4, suspended: true, gpusPerPod: 1, finish: null });
  });

  it('keeps why a pod failed as one small integer, none of the strings it is read from', () => {
    const evicted = aPod({
      status: {
        phase: 'Failed', reason: 'Evicted',
        conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet' }],
        containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }],
      },
    });
    const facts = new FactsProjection().pod(evicted);
    expect(podFailureEvidence(facts.failureHints)).to.deep.equal(['evicted', 'oom_killed']);
    expect(Number.isInteger(facts.failureHints) && facts.failureHints < 2 ** 30).to.equal(true);
    expect(ownValues(facts)).not.to.include.members(['Evicted', 'TerminationByKubelet', 'OOMKilled']);
    expect(new FactsProjection().pod(aPod()).failureHints).to.equal(0);
    expect(tombstone(facts, ms('2026-11-20T11:00:00Z')).failureHints).to.equal(facts.failureHints);
  });

  it("keeps of a failed Job's condition the reason it proves, as a FAILURE_REASONS constant, and nothing for a completed one", () => {
    const projection = new FactsProjection();
    const condition = (type: string, reason: string) => ({ type, status: 'True', reason, lastTransitionTime: '2026-11-20T11:00:00Z' });
    expect(projection.job(aJob({ status: { conditions: [condition('Failed', 'BackoffLimitExceeded')] } })).failedBy).to.equal('backoff_limit_exceeded');
    expect(projection.job(aJob({ status: { conditions: [condition('Failed', 'DeadlineExceeded')] } })).failedBy).to.equal('deadline_exceeded');
    expect(projection.job(aJob({ status: { conditions: [condition('Failed', 'PodFailurePolicy')] } })).failedBy).to.equal(null);
    expect(projection.job(aJob({ status: { conditions: [condition('Complete', 'CompletionsReached')] } })).failedBy).to.equal(null);
  });

  it('a tombstone is the pod deleted at that time, first seen when the pod was', () => {
    const running = new FactsProjection().pod(aPod({ status: { phase: 'Running', startTime: '2026-11-20T10:01:00Z' } }), 1234);
    const gone = tombstone(running, ms('2026-11-20T10:30:00.500Z'));
    expect(gone.deletionRequestedAt).to.equal(ms('2026-11-20T10:30:00.500Z'));
    expect(gone.observedAt).to.equal(1234);
    expect(running.deletionRequestedAt).to.equal(null);
    expect(podState(gone)).to.include({ status: 'cancelled', completedAt: ms('2026-11-20T10:30:00.500Z') });
  });

  it("holds no GPU for a pod of KAI's reservation namespace, which names the GPUs behind the fractions", () => {
    const reservation = podFixture('gpu-sharing/pod-kai-reservation.json');
    expect(new FactsProjection().pod(reservation).gpus, 'no namespace set').to.equal(1);
    expect(new FactsProjection({ reservationNamespace: 'kai-resource-reservation' }).pod(reservation).gpus).to.equal(0);
    const elsewhere = { ...reservation, metadata: { ...reservation.metadata, namespace: 'ml' } };
    expect(new FactsProjection({ reservationNamespace: 'kai-resource-reservation' }).pod(elsewhere).gpus).to.equal(1);
  });
});
