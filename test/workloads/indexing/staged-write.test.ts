// How a taken batch is cut into steps for a sink that writes rows with their pods' intervals in one
// call (PostgreSQL's writer): each row arrives with its workload's intervals, so that the row is
// written once; intervals of workloads without a row come after every row; no step exceeds its
// budget, even for a workload with more intervals than that. The recording sink stands in for the
// store: only the cutting is under test here (the writes themselves: test/store/postgres/writes.test.ts).
import { expect } from 'chai';
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import { StagedWrite } from '../../../src/workloads/indexing/staged-write.js';
import type { WorkloadSink } from '../../../src/workloads/workload-sink.js';
import { aWorkload } from '../../support/workload-builder.js';

const interval = (podUid: string, workloadId: string): PodGpuInterval => ({ podUid, workloadId, gpus: 1, startedAt: 1, finishedAt: null });

function recordingSink(): WorkloadSink & { calls: { rows: string[]; intervals: string[] }[] } {
  const calls: { rows: string[]; intervals: string[] }[] = [];
  const unexpected = () => Promise.reject(new Error('a sink that writes rows with their intervals gets no separate call'));
  return {
    calls,
    writeWorkloads: (records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]) => {
      calls.push({ rows: records.map((r) => r.workloadId), intervals: intervals.map((i) => i.podUid) });
      return Promise.resolve({ rows: records.length, intervals: intervals.length });
    },
    upsertWorkloads: unexpected,
    upsertPodIntervals: unexpected,
    closeOpenIntervals: () => Promise.resolve(0),
    listUnfinished: () => [],
  };
}

async function steps(contents: { rows: WorkloadRecord[]; intervals: PodGpuInterval[] }, budget: number) {
  const sink = recordingSink();
  const staged = new StagedWrite({ ...contents, closings: [] });
  while (!staged.done) await staged.step(sink, budget);
  return { calls: sink.calls, written: staged.written };
}

describe('workloads/staged-write with a sink that writes rows and intervals together', () => {
  it('sends each row with all its intervals, and the intervals of workloads without a row after every row', async () => {
    const { calls, written } = await steps({
      rows: [aWorkload({ workloadId: 'a' }), aWorkload({ workloadId: 'b' })],
      intervals: [interval('orphan-1', 'x'), interval('b-1', 'b'), interval('a-1', 'a'), interval('b-2', 'b')],
    }, 3);
    expect(calls).to.deep.equal([
      { rows: ['a'], intervals: ['a-1'] }, // b and its two intervals would not fit the 3 items left: the next step
      { rows: ['b'], intervals: ['b-1', 'b-2'] },
      { rows: [], intervals: ['orphan-1'] },
    ]);
    expect(written).to.deep.equal({ rows: 2, intervals: 4, closed: 0 });
  });

  it('splits a workload with more intervals than a step holds, its row in the first step', async () => {
    const { calls } = await steps({
      rows: [aWorkload({ workloadId: 'big' }), aWorkload({ workloadId: 'small' })],
      intervals: ['1', '2', '3', '4', '5'].map((n) => interval(`big-${n}`, 'big')).concat(interval('small-1', 'small')),
    }, 2);
    expect(calls).to.deep.equal([
      { rows: ['big'], intervals: ['big-1'] },
      { rows: [], intervals: ['big-2', 'big-3'] },
      { rows: [], intervals: ['big-4', 'big-5'] },
      { rows: ['small'], intervals: ['small-1'] },
    ]);
  });

  it('fills a step with as many whole workloads as fit', async () => {
    const rows = ['a', 'b', 'c', 'd', 'e'].map((id) => aWorkload({ workloadId: id }));
    const { calls } = await steps({ rows, intervals: rows.map((r) => interval(`${r.workloadId}-1`, r.workloadId)) }, 5);
    expect(calls.map((c) => c.rows)).to.deep.equal([['a', 'b'], ['c', 'd'], ['e']]);
  });
});
