// Job status, times and exit code (DECISIONS "Status and times").
import { expect } from 'chai';
import { jobState } from '../../../src/workloads/mapping/job-status.js';
import type { Job, Pod } from '../../../src/k8s/objects/k8s-types.js';
import type { StateOptions } from '../../../src/workloads/mapping/pod-status.js';
import type { WorkloadState } from '../../../src/workloads/mapping/workload-state.js';
import { aJob, aJobPod, jobFacts, ms, podFacts, terminated } from '../fixtures.js';

const STARTED = '2026-11-20T10:01:00Z';
const DONE = '2026-11-20T11:00:00Z';
const DELETE_AT = '2026-11-20T10:30:00Z';
const complete = { type: 'Complete', status: 'True', lastTransitionTime: DONE };
const failedCondition = { type: 'Failed', status: 'True', lastTransitionTime: DONE };

const podEnding = (uid: string, exitCode: number, finishedAt: string): Pod =>
  aJobPod('job-1', { metadata: { uid }, status: { phase: exitCode === 0 ? 'Succeeded' : 'Failed', startTime: STARTED, containerStatuses: [terminated(exitCode, finishedAt)] } });

describe('workloads: job status and times', () => {
  const rows: { name: string; job: Job; options?: StateOptions & { pods?: Pod[] }; expected: WorkloadState }[] = [
    { name: 'not started is pending', job: aJob(), expected: { status: 'pending', startedAt: null, completedAt: null, exitCode: null } },
    { name: 'started and unfinished is running', job: aJob({ status: { startTime: STARTED } }), expected: { status: 'running', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'suspended (Kueue, not admitted) is pending', job: aJob({ spec: { suspend: true } }), expected: { status: 'pending', startedAt: null, completedAt: null, exitCode: null } },
    { name: 'suspended after it started is pending', job: aJob({ spec: { suspend: true }, status: { startTime: STARTED } }), expected: { status: 'pending', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'resumed (suspend false) and started is running', job: aJob({ spec: { suspend: false }, status: { startTime: STARTED } }), expected: { status: 'running', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'a Complete condition is completed at its transition, exit 0', job: aJob({ status: { startTime: STARTED, conditions: [complete] } }), expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms(DONE), exitCode: 0 } },
    { name: 'a Complete condition that is not True does not finish the Job', job: aJob({ status: { startTime: STARTED, conditions: [{ ...complete, status: 'False' }] } }), expected: { status: 'running', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'a Complete condition without a transition time uses completionTime', job: aJob({ status: { startTime: STARTED, completionTime: '2026-11-20T11:05:00Z', conditions: [{ type: 'Complete', status: 'True' }] } }), expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms('2026-11-20T11:05:00Z'), exitCode: 0 } },
    {
      name: 'a Failed condition is failed with the exit code of the last terminated pod',
      job: aJob({ status: { startTime: STARTED, conditions: [failedCondition] } }),
      options: { pods: [podEnding('p2', 2, '2026-11-20T10:59:00Z'), podEnding('p1', 1, '2026-11-20T10:20:00Z')] },
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms(DONE), exitCode: 2 },
    },
    {
      name: 'a completed Job after a retry has exit code 0 (its last pod succeeded)',
      job: aJob({ status: { startTime: STARTED, conditions: [complete] } }),
      options: { pods: [podEnding('p1', 1, '2026-11-20T10:20:00Z'), podEnding('p2', 0, '2026-11-20T10:59:00Z')] },
      expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms(DONE), exitCode: 0 },
    },
    {
      name: 'a failed Job whose pods are gone has exit code 0',
      job: aJob({ status: { startTime: STARTED, conditions: [failedCondition] } }),
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms(DONE), exitCode: 0 },
    },
    {
      name: 'deleted while running is cancelled at the deletion time',
      job: aJob({ status: { startTime: STARTED } }),
      options: { deleted: { at: ms(DELETE_AT) } },
      expected: { status: 'cancelled', startedAt: ms(STARTED), completedAt: ms(DELETE_AT), exitCode: 0 },
    },
    {
      name: 'a deletionTimestamp on a running Job cancels it',
      job: aJob({ metadata: { deletionTimestamp: DELETE_AT, deletionGracePeriodSeconds: 0 }, status: { startTime: STARTED } }),
      expected: { status: 'cancelled', startedAt: ms(STARTED), completedAt: ms(DELETE_AT), exitCode: 0 },
    },
    {
      name: 'deleted while suspended is cancelled, never started',
      job: aJob({ spec: { suspend: true } }),
      options: { deleted: { at: ms(DELETE_AT) } },
      expected: { status: 'cancelled', startedAt: null, completedAt: ms(DELETE_AT), exitCode: 0 },
    },
    {
      name: 'a finished Job stays finished when deleted',
      job: aJob({ metadata: { deletionTimestamp: '2026-11-20T12:00:00Z' }, status: { startTime: STARTED, conditions: [complete] } }),
      options: { deleted: { at: ms('2026-11-20T12:00:00Z') } },
      expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms(DONE), exitCode: 0 },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      expect(jobState(jobFacts(row.job), { ...row.options, pods: row.options?.pods?.map((pod) => podFacts(pod)) })).to.deep.equal(row.expected);
    });
  }
});
