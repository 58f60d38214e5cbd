// A GPU Job → workload row, with its pods folded in as GPU intervals.
import { expect } from 'chai';
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import type { Job, Pod } from '../../../src/k8s/objects/k8s-types.js';
import { firstPodNodeName, mapJob } from '../../../src/workloads/mapping/map-job.js';
import type { MappingContext } from '../../../src/workloads/mapping/mapping-context.js';
import { aContainer, aContext, aPendingRow, aJob, aJobPod, aNamespace, aNode, gpuContainer, jobFacts, ms, podFacts, terminated } from '../fixtures.js';

const STARTED = '2026-11-20T10:01:00Z';
const DONE = '2026-11-20T11:00:00Z';

const pendingRow: WorkloadRecord = aPendingRow('Job', 'job-1');

const podOf = (uid: string, status: Pod['status']): Pod => aJobPod('job-1', { metadata: { uid }, status });

describe('workloads: mapJob rows', () => {
  const rows: { name: string; job: Job; context?: Partial<MappingContext>; expected: WorkloadRecord }[] = [
    { name: 'a pending GPU Job with no labels gets every fallback', job: aJob(), expected: pendingRow },
    { name: 'gpu_count = per-pod request × parallelism', job: aJob({ podSpec: { containers: [gpuContainer(2)] }, spec: { parallelism: 4 } }), expected: { ...pendingRow, gpuCount: 8 } },
    { name: 'parallelism defaults to 1', job: aJob({ podSpec: { containers: [gpuContainer(8)] } }), expected: { ...pendingRow, gpuCount: 8 } },
    { name: 'parallelism 0 holds no GPU', job: aJob({ spec: { parallelism: 0 } }), expected: { ...pendingRow, gpuCount: 0 } },
    {
      name: 'a Kueue Job waiting for admission is pending and managed',
      job: aJob({ metadata: { labels: { 'kueue.x-k8s.io/queue-name': 'team-a' } }, spec: { suspend: true } }),
      expected: { ...pendingRow, isManaged: true },
    },
    {
      name: 'attribution reads the Job, its namespace, the first pod’s node and the cluster',
      job: aJob({ metadata: { annotations: { 'gpucap.io/submitted-by': 'bob' } } }),
      context: { clusterOrganizationId: 'globex', namespace: aNamespace({ 'gpucap.io/initiative': 'vision' }), node: aNode({ 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' }) },
      expected: { ...pendingRow, organizationId: 'globex', initiativeId: 'vision', submittedBy: 'bob', instanceType: 'NVIDIA-A100-SXM4-80GB' },
    },
    {
      name: 'a failed Job has the exit code of its last terminated pod',
      job: aJob({ status: { startTime: STARTED, conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: DONE }] } }),
      context: {
        pods: [
          podOf('p1', { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(1, '2026-11-20T10:30:00Z')] }),
          podOf('p2', { phase: 'Failed', startTime: '2026-11-20T10:31:00Z', containerStatuses: [terminated(42, '2026-11-20T10:59:00Z')] }),
        ].map((pod) => podFacts(pod)),
      },
      expected: { ...pendingRow, status: 'failed', startedAt: ms(STARTED), completedAt: ms(DONE), exitCode: 42, failureReason: 'nonzero_exit' },
    },
    {
      name: 'a running Job deleted is cancelled',
      job: aJob({ status: { startTime: STARTED } }),
      context: { deleted: { at: ms('2026-11-20T10:30:00Z') } },
      expected: { ...pendingRow, status: 'cancelled', startedAt: ms(STARTED), completedAt: ms('2026-11-20T10:30:00Z'), exitCode: 0, failureReason: 'deleted' },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      expect(mapJob(jobFacts(row.job, aContext(row.context)), aContext(row.context))?.workload).to.deep.equal(row.expected);
    });
  }
});

describe('workloads: Jobs that are not workloads', () => {
  const rows: { name: string; job: Job }[] = [
    { name: 'a Job whose template requests no GPU', job: aJob({ podSpec: { containers: [aContainer({ requests: { cpu: '4' } })] } }) },
    { name: 'a Job without a uid', job: aJob({ metadata: { uid: '' } }) },
  ];
  for (const row of rows) {
    it(`${row.name} maps to null`, () => {
      expect(mapJob(jobFacts(row.job), aContext())).to.equal(null);
    });
  }
});

describe('workloads: pods of a Job become its GPU intervals', () => {
  const retried = podOf('p1', { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(1, '2026-11-20T10:30:00Z')] });
  const running = podOf('p2', { phase: 'Running', startTime: '2026-11-20T10:31:00Z' });
  const pending = podOf('p3', { phase: 'Pending' });
  const rows: { name: string; pods: Pod[]; context?: Partial<MappingContext>; expected: PodGpuInterval[] }[] = [
    { name: 'no pods, no intervals', pods: [], expected: [] },
    {
      name: 'a retried pod and its replacement each count, keyed to the Job',
      pods: [retried, running, pending],
      expected: [
        { podUid: 'p1', workloadId: 'job-1', gpus: 1, startedAt: ms(STARTED), finishedAt: ms('2026-11-20T10:30:00Z') },
        { podUid: 'p2', workloadId: 'job-1', gpus: 1, startedAt: ms('2026-11-20T10:31:00Z'), finishedAt: null },
        { podUid: 'p3', workloadId: 'job-1', gpus: 1, startedAt: null, finishedAt: null },
      ],
    },
    {
      name: 'deleting the Job ends its running pods at the deletion, finished ones keep their end',
      pods: [retried, running],
      context: { deleted: { at: ms('2026-11-20T10:45:00Z') } },
      expected: [
        { podUid: 'p1', workloadId: 'job-1', gpus: 1, startedAt: ms(STARTED), finishedAt: ms('2026-11-20T10:30:00Z') },
        { podUid: 'p2', workloadId: 'job-1', gpus: 1, startedAt: ms('2026-11-20T10:31:00Z'), finishedAt: ms('2026-11-20T10:45:00Z') },
      ],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      expect(mapJob(jobFacts(aJob()), aContext({ ...row.context, pods: row.pods.map((pod) => podFacts(pod)) }))?.intervals).to.deep.equal(row.expected);
    });
  }
});

describe('workloads: the node of a Job’s first pod', () => {
  const at = (uid: string, created: string, nodeName?: string): Pod =>
    aJobPod('job-1', { metadata: { uid, creationTimestamp: created }, spec: { containers: [gpuContainer(1)], ...(nodeName === undefined ? {} : { nodeName }) } });
  const rows: { name: string; pods: Pod[]; expected: string | null }[] = [
    { name: 'no pods', pods: [], expected: null },
    { name: 'the earliest-created scheduled pod', pods: [at('b', '2026-11-20T10:05:00Z', 'node-b'), at('a', '2026-11-20T10:00:00Z', 'node-a')], expected: 'node-a' },
    { name: 'unscheduled pods are skipped', pods: [at('a', '2026-11-20T10:00:00Z'), at('b', '2026-11-20T10:05:00Z', 'node-b')], expected: 'node-b' },
  ];
  for (const row of rows) {
    it(`${row.name}: ${String(row.expected)}`, () => {
      expect(firstPodNodeName(row.pods.map((pod) => podFacts(pod)))).to.equal(row.expected);
    });
  }
});
