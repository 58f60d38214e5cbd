// A standalone GPU Pod → workload row + GPU interval; a pod → its GPU interval.
import { expect } from 'chai';
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import { mapPod, podInterval, type PodIntervalOptions } from '../../../src/workloads/mapping/map-pod.js';
import type { MappingContext } from '../../../src/workloads/mapping/mapping-context.js';
import { DEFAULT_LABEL_KEYS } from '../../../src/workloads/attribution/label-keys.js';
import { aContainer, aContext, aPendingRow, aJobPod, aNamespace, aNode, aPod, gpuContainer, ms, podFacts, terminated } from '../fixtures.js';

const STARTED = '2026-11-20T10:01:00Z';
const FINISHED = '2026-11-20T11:00:00Z';

const pendingRow: WorkloadRecord = aPendingRow('Pod', 'uid-1');

describe('workloads: mapPod rows', () => {
  const rows: { name: string; pod: Pod; context?: Partial<MappingContext>; expected: WorkloadRecord }[] = [
    { name: 'a pending GPU pod with no labels gets every fallback', pod: aPod(), expected: pendingRow },
    {
      name: 'labels, namespace, node and cluster settings are read',
      pod: aPod({ metadata: { labels: { 'gpucap.io/initiative': 'llm', 'gpucap.io/submitted-by': 'alice', 'kueue.x-k8s.io/queue-name': 'q' } } }),
      context: { clusterId: 'eu-1', clusterOrganizationId: 'globex', namespace: aNamespace({ 'gpucap.io/organization': 'acme' }), node: aNode({ 'node.kubernetes.io/instance-type': 'p5.48xlarge' }) },
      expected: { ...pendingRow, clusterId: 'eu-1', organizationId: 'acme', initiativeId: 'llm', submittedBy: 'alice', isManaged: true, instanceType: 'p5.48xlarge' },
    },
    {
      name: 'the capacity type is read from the node it runs on: Karpenter\'s label, no other while none is configured',
      pod: aPod(),
      context: { node: aNode({ 'karpenter.sh/capacity-type': 'spot', 'gpucap.io/sold-as': 'Reserved' }) },
      expected: { ...pendingRow, capacityType: 'spot' },
    },
    {
      name: 'the configured capacity-type label is the only one read',
      pod: aPod(),
      context: {
        node: aNode({ 'karpenter.sh/capacity-type': 'spot', 'gpucap.io/sold-as': 'Reserved' }),
        keys: { ...DEFAULT_LABEL_KEYS, capacityType: 'gpucap.io/sold-as' },
      },
      expected: { ...pendingRow, capacityType: 'reserved' },
    },
    {
      name: 'gpu_count is the effective request (init container larger than the app containers)',
      pod: aPod({ spec: { initContainers: [gpuContainer(4)], containers: [gpuContainer(1), gpuContainer(2)] } }),
      expected: { ...pendingRow, gpuCount: 4 },
    },
    {
      name: 'a failed pod has its times and exit code',
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(137, FINISHED)] } }),
      expected: { ...pendingRow, status: 'failed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 137, failureReason: 'nonzero_exit' },
    },
    {
      name: 'a running pod deleted is cancelled',
      pod: aPod({ status: { phase: 'Running', startTime: STARTED } }),
      context: { deleted: { at: ms('2026-11-20T10:30:00Z') } },
      expected: { ...pendingRow, status: 'cancelled', startedAt: ms(STARTED), completedAt: ms('2026-11-20T10:30:00Z'), exitCode: 0, failureReason: 'deleted' },
    },
    {
      name: 'a pod owned by something other than a Job is a workload of its own',
      pod: aPod({ metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', uid: 'rs-1' }] } }),
      expected: pendingRow,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const mapped = mapPod(podFacts(row.pod, aContext(row.context)), aContext(row.context));
      expect(mapped?.workload).to.deep.equal(row.expected);
    });
  }
});

describe('workloads: pods that are not workloads', () => {
  const rows: { name: string; pod: Pod }[] = [
    { name: 'a pod requesting no GPU', pod: aPod({ spec: { containers: [aContainer({ requests: { cpu: '1' } })] } }) },
    { name: 'a pod owned by a Job (folded into the Job)', pod: aJobPod('job-1') },
    { name: 'a pod without a uid', pod: aPod({ metadata: { uid: '' } }) },
  ];
  for (const row of rows) {
    it(`${row.name} maps to null`, () => {
      expect(mapPod(podFacts(row.pod), aContext())).to.equal(null);
    });
  }
});

describe('workloads: a standalone pod carries its own GPU interval', () => {
  it('one interval keyed by the pod uid, with its GPUs and times', () => {
    const pod = aPod({ spec: { containers: [gpuContainer(2)] }, status: { phase: 'Succeeded', startTime: STARTED, containerStatuses: [terminated(0, FINISHED)] } });
    expect(mapPod(podFacts(pod), aContext())?.intervals).to.deep.equal([
      { podUid: 'uid-1', workloadId: 'uid-1', gpus: 2, startedAt: ms(STARTED), finishedAt: ms(FINISHED) },
    ]);
  });
});

describe('workloads: podInterval', () => {
  const base = { podUid: 'pod-1', workloadId: 'job-1', gpus: 1 };
  const rows: { name: string; pod: Pod; options?: PodIntervalOptions; expected: PodGpuInterval }[] = [
    { name: 'a pending pod has not started', pod: aJobPod('job-1'), expected: { ...base, startedAt: null, finishedAt: null } },
    { name: 'a running pod is open-ended', pod: aJobPod('job-1', { status: { phase: 'Running', startTime: STARTED } }), expected: { ...base, startedAt: ms(STARTED), finishedAt: null } },
    {
      name: 'a finished pod ends at its last container finish',
      pod: aJobPod('job-1', { status: { phase: 'Succeeded', startTime: STARTED, containerStatuses: [terminated(0, '2026-11-20T10:50:00Z'), terminated(0, FINISHED)] } }),
      expected: { ...base, startedAt: ms(STARTED), finishedAt: ms(FINISHED) },
    },
    {
      name: 'a running pod deleted ends at the deletion',
      pod: aJobPod('job-1', { status: { phase: 'Running', startTime: STARTED } }),
      options: { deleted: { at: ms('2026-11-20T10:30:00Z') } },
      expected: { ...base, startedAt: ms(STARTED), finishedAt: ms('2026-11-20T10:30:00Z') },
    },
    {
      name: 'a pod killed by deletion holds its GPUs until its containers stop (grace period)',
      pod: aJobPod('job-1', { metadata: { deletionTimestamp: '2026-11-20T10:30:30Z', deletionGracePeriodSeconds: 30 }, status: { phase: 'Running', startTime: STARTED, containerStatuses: [terminated(143, '2026-11-20T10:30:20Z')] } }),
      expected: { ...base, startedAt: ms(STARTED), finishedAt: ms('2026-11-20T10:30:20Z') },
    },
    {
      name: 'the GPUs are the pod’s own effective request',
      pod: aJobPod('job-1', { spec: { containers: [gpuContainer(2), gpuContainer(2)] } }),
      expected: { ...base, gpus: 4, startedAt: null, finishedAt: null },
    },
    {
      name: 'the workload id can be given',
      pod: aJobPod('job-1'),
      options: { workloadId: 'other' },
      expected: { ...base, workloadId: 'other', startedAt: null, finishedAt: null },
    },
    {
      name: 'a standalone pod is its own workload',
      pod: aPod({ metadata: { uid: 'solo' } }),
      expected: { podUid: 'solo', workloadId: 'solo', gpus: 1, startedAt: null, finishedAt: null },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      expect(podInterval(podFacts(row.pod), row.options)).to.deep.equal(row.expected);
    });
  }
});
