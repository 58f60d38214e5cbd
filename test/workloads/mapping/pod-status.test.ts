// Pod status, times and exit code (DECISIONS "Status and times").
import { expect } from 'chai';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import { podState, type StateOptions } from '../../../src/workloads/mapping/pod-status.js';
import type { WorkloadState } from '../../../src/workloads/mapping/workload-state.js';
import { aPod, ms, podFacts, terminated } from '../fixtures.js';

const STARTED = '2026-11-20T10:01:00Z';
const FINISHED = '2026-11-20T11:00:00Z';
const DELETE_AT = '2026-11-20T10:30:00Z';

describe('workloads: pod status and times', () => {
  const rows: { name: string; pod: Pod; options?: StateOptions; expected: WorkloadState }[] = [
    { name: 'Pending is pending', pod: aPod({ status: { phase: 'Pending' } }), expected: { status: 'pending', startedAt: null, completedAt: null, exitCode: null } },
    { name: 'Pending with a startTime (pulling images) is pending, started', pod: aPod({ status: { phase: 'Pending', startTime: STARTED } }), expected: { status: 'pending', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'Running is running from startTime', pod: aPod({ status: { phase: 'Running', startTime: STARTED } }), expected: { status: 'running', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'Unknown after start is running', pod: aPod({ status: { phase: 'Unknown', startTime: STARTED } }), expected: { status: 'running', startedAt: ms(STARTED), completedAt: null, exitCode: null } },
    { name: 'no phase and no start is pending', pod: aPod({ status: {} }), expected: { status: 'pending', startedAt: null, completedAt: null, exitCode: null } },
    {
      name: 'Succeeded is completed at the last container finish, exit 0',
      pod: aPod({ status: { phase: 'Succeeded', startTime: STARTED, containerStatuses: [terminated(0, '2026-11-20T10:50:00Z'), terminated(0, FINISHED)] } }),
      expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 0 },
    },
    {
      name: 'Failed is failed with the first non-zero exit code',
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(0, FINISHED), terminated(137, FINISHED), terminated(2, FINISHED)] } }),
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 137 },
    },
    {
      name: 'a failed init container gives the exit code',
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED, initContainerStatuses: [terminated(3, FINISHED)], containerStatuses: [{ name: 'c', state: {} }] } }),
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 3 },
    },
    {
      name: "a restarted container's last terminated state gives the exit code",
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED, containerStatuses: [{ name: 'c', state: {}, lastState: { terminated: { exitCode: 1, finishedAt: FINISHED } } }] } }),
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 1 },
    },
    {
      name: 'Failed without container times (evicted) ends at the latest condition transition',
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED, conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-11-20T10:40:00Z' }, { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-20T10:00:30Z' }] } }),
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms('2026-11-20T10:40:00Z'), exitCode: 0 },
    },
    {
      name: 'Failed with no recorded time at all ends when observed',
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED } }),
      options: { observedAt: ms('2026-11-20T12:00:00Z') },
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms('2026-11-20T12:00:00Z'), exitCode: 0 },
    },
    {
      name: 'a deletionTimestamp on a running pod cancels it at the deletion request (timestamp − grace)',
      pod: aPod({ metadata: { deletionTimestamp: '2026-11-20T10:30:30Z', deletionGracePeriodSeconds: 30 }, status: { phase: 'Running', startTime: STARTED } }),
      expected: { status: 'cancelled', startedAt: ms(STARTED), completedAt: ms(DELETE_AT), exitCode: 0 },
    },
    {
      name: 'a running pod deleted is cancelled at the deletion time',
      pod: aPod({ status: { phase: 'Running', startTime: STARTED } }),
      options: { deleted: { at: ms(DELETE_AT) } },
      expected: { status: 'cancelled', startedAt: ms(STARTED), completedAt: ms(DELETE_AT), exitCode: 0 },
    },
    {
      name: 'a pending pod deleted is cancelled, never started',
      pod: aPod({ status: { phase: 'Pending' } }),
      options: { deleted: { at: ms(DELETE_AT) } },
      expected: { status: 'cancelled', startedAt: null, completedAt: ms(DELETE_AT), exitCode: 0 },
    },
    {
      name: 'a pod killed by its deletion (containers stopped after it) is cancelled with their exit code',
      pod: aPod({ metadata: { deletionTimestamp: '2026-11-20T10:30:30Z', deletionGracePeriodSeconds: 30 }, status: { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(143, '2026-11-20T10:30:05Z')] } }),
      expected: { status: 'cancelled', startedAt: ms(STARTED), completedAt: ms(DELETE_AT), exitCode: 143 },
    },
    {
      name: 'a pod whose containers stopped in the same second as the deletion request was killed by it',
      pod: aPod({ metadata: { deletionTimestamp: '2026-11-20T10:30:30Z', deletionGracePeriodSeconds: 30 }, status: { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(143, DELETE_AT)] } }),
      expected: { status: 'cancelled', startedAt: ms(STARTED), completedAt: ms(DELETE_AT), exitCode: 143 },
    },
    {
      name: 'a pod that finished before it was deleted stays completed',
      pod: aPod({ metadata: { deletionTimestamp: '2026-11-20T11:30:30Z', deletionGracePeriodSeconds: 30 }, status: { phase: 'Succeeded', startTime: STARTED, containerStatuses: [terminated(0, FINISHED)] } }),
      options: { deleted: { at: ms('2026-11-20T11:31:00Z') } },
      expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 0 },
    },
    {
      name: 'a failed pod deleted afterwards stays failed',
      pod: aPod({ status: { phase: 'Failed', startTime: STARTED, containerStatuses: [terminated(1, FINISHED)] } }),
      options: { deleted: { at: ms('2026-11-20T12:00:00Z') } },
      expected: { status: 'failed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 1 },
    },
    {
      name: 'Date objects (as the client library gives them) read like strings',
      pod: aPod({ status: { phase: 'Succeeded', startTime: new Date(STARTED), containerStatuses: [{ state: { terminated: { exitCode: 0, finishedAt: new Date(FINISHED) } } }] } }),
      expected: { status: 'completed', startedAt: ms(STARTED), completedAt: ms(FINISHED), exitCode: 0 },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      expect(podState(podFacts(row.pod), row.options)).to.deep.equal(row.expected);
    });
  }
});
