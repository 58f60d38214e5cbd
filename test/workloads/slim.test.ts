// The slim copies the indexer caches: what the mappers read stays (the mapper tables check that the
// rows are identical), everything else an API server sends goes.
import { expect } from 'chai';
import type { Pod } from '../../src/workloads/k8s-types.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from '../../src/workloads/mapping-context.js';
import { podState } from '../../src/workloads/pod-status.js';
import { slimJob, slimPod } from '../../src/workloads/slim.js';
import { aJob, aPod, gpuContainer } from './fixtures.js';

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
      phase: 'Running', startTime: '2026-11-20T10:01:00Z',
      containerStatuses: [{ name: 'c', state: { running: { startedAt: '2026-11-20T10:01:00Z' } }, imageID: 'sha256:'.padEnd(71, '0') } as never],
    },
  };
}

describe('workloads: slim copies', () => {
  it('drops what no mapper reads: env, volumes, probes, unread labels and annotations', () => {
    const full = aFullPod();
    const slim = slimPod(full, DEFAULT_LABEL_KEYS);
    expect(slim.metadata?.labels).to.deep.equal({ 'gpucap.io/initiative': 'llm' });
    expect(slim.metadata?.annotations).to.deep.equal({ 'gpucap.io/submitted-by': 'alice' });
    expect(slim.spec).to.deep.equal({ nodeName: 'gpu-1', containers: [{ name: 'c', resources: { limits: { 'nvidia.com/gpu': 8 } } }] });
    expect(slim.status?.containerStatuses).to.deep.equal([{ name: 'c', state: {} }]);
    expect(JSON.stringify(slim).length).to.be.below(JSON.stringify(full).length / 10);
  });

  it('keeps the label keys the service is configured with, not the defaults', () => {
    const keys: LabelKeys = { ...DEFAULT_LABEL_KEYS, initiative: 'example.com/team' };
    const pod = aPod({ metadata: { labels: { 'example.com/team': 'vision', 'gpucap.io/initiative': 'llm' } } });
    expect(slimPod(pod, keys).metadata?.labels).to.deep.equal({ 'example.com/team': 'vision' });
  });

  it("keeps of a pod's conditions only the latest transition, which a finished pod's end falls back on", () => {
    const conditions = [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-20T10:00:05Z', reason: 'Scheduled' },
      { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-20T12:30:00Z', message: 'containers not ready' },
      { type: 'Initialized', status: 'True', lastTransitionTime: 'not a time' },
      { type: 'ContainersReady', status: 'False', lastTransitionTime: '2026-11-20T12:29:59Z' },
    ];
    // No container statuses: the conditions are what tells when it finished.
    const finished = aPod({ status: { phase: 'Succeeded', startTime: '2026-11-20T10:01:00Z', conditions } });
    const slim = slimPod(finished, DEFAULT_LABEL_KEYS);
    expect(slim.status?.conditions).to.deep.equal([{ type: 'Ready', status: 'False', lastTransitionTime: '2026-11-20T12:30:00Z' }]);
    expect(podState(slim)).to.deep.equal(podState(finished));
    expect(podState(slim)).to.include({ completedAt: Date.parse('2026-11-20T12:30:00Z') });
    const unreadable = slimPod(aPod({ status: { phase: 'Succeeded', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: 'soon' }] } }), DEFAULT_LABEL_KEYS);
    expect(unreadable.status?.conditions).to.deep.equal([]);
  });

  it('leaves out empty parts instead of writing undefined fields', () => {
    const slim = slimJob(aJob({ status: {} }), DEFAULT_LABEL_KEYS);
    expect(Object.values(slim.metadata ?? {})).to.not.include(undefined);
    expect(slim.status).to.deep.equal({});
    expect(slimPod(slimPod(aFullPod(), DEFAULT_LABEL_KEYS), DEFAULT_LABEL_KEYS)).to.deep.equal(slimPod(aFullPod(), DEFAULT_LABEL_KEYS));
  });
});
