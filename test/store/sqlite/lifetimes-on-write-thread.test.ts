// What the lifetime saves through the write worker send again after a failure: a workload's newest
// totals (they replace what is stored), and the usage of every failed save added into the next send
// (it is added to what is stored): none lost, none sent twice once committed. The worker is stood in
// for by saves the test answers one by one; write-thread.test.ts runs the real one.
// settle(): lets the answers given reach the saver.
import { setImmediate as settle } from 'node:timers/promises';
import { expect } from 'chai';
import { emptyUsage, type GpuUsage } from '../../../src/domain/gpu-usage.js';
import type { LifetimeSave, LifetimeTotals } from '../../../src/domain/telemetry.js';
import { AsyncLifetimes } from '../../../src/store/sqlite/async-lifetimes.js';

const totals = (sum: number): LifetimeTotals => ({ gpu_utilization: { count: 1, sum, min: sum, max: sum, current: sum } });
const idle = (idleSeconds: number): GpuUsage => ({ ...emptyUsage(), idleSeconds });

interface Sent {
  entries: readonly LifetimeSave[];
  commit(): void;
  fail(): void;
}

function setUp() {
  const sent: Sent[] = [];
  const errors: object[] = [];
  const lifetimes = new AsyncLifetimes({
    stored: { loadLifetime: () => totals(0) },
    writes: {
      saveLifetimes: (entries) =>
        new Promise<void>((resolve, reject) => void sent.push({ entries: structuredClone(entries), commit: resolve, fail: () => reject(new Error('disk full')) })),
    },
    logger: { error: (fields) => errors.push(fields) },
  });
  return { sent, errors, lifetimes };
}

describe('lifetime saves through the write worker: additive usage', () => {
  it('adds a failed save\'s usage into the next send of its workload, and sends it no more once committed', async () => {
    const { sent, errors, lifetimes } = setUp();
    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(10), usage: idle(60) }]);
    sent[0]?.fail();
    await settle();
    expect(errors).to.have.length(1);
    expect(lifetimes.loadLifetime('w-1')).to.deep.equal(totals(10));

    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(20), usage: idle(15) }]);
    expect(sent[1]?.entries).to.deep.equal([{ workloadId: 'w-1', totals: totals(20), usage: idle(75) }]);
    sent[1]?.commit();
    await settle();
    expect(lifetimes.unsaved).to.equal(0);

    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(30), usage: idle(30) }]);
    expect(sent[2]?.entries).to.deep.equal([{ workloadId: 'w-1', totals: totals(30), usage: idle(30) }]);
  });

  it('resends a failed save\'s usage even when newer totals of the workload went in the meantime, with those totals', async () => {
    const { sent, lifetimes } = setUp();
    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(10), usage: idle(60) }]);
    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(20), usage: idle(15) }]);
    sent[0]?.fail();
    sent[1]?.commit();
    await settle();
    // Nothing of w-1's totals to send again, but its first 60 s: they wait, read answers the newest totals.
    expect(lifetimes.unsaved).to.equal(1);
    expect(lifetimes.loadLifetime('w-1')).to.deep.equal(totals(20));

    lifetimes.saveLifetimes([{ workloadId: 'w-2', totals: totals(5) }]);
    expect(sent[2]?.entries).to.deep.equal([
      { workloadId: 'w-1', totals: totals(20), usage: idle(60) },
      { workloadId: 'w-2', totals: totals(5) },
    ]);
    sent[2]?.commit();
    await settle();
    expect(lifetimes.unsaved).to.equal(0);
    expect(lifetimes.loadLifetime('w-1')).to.deep.equal(totals(0)); // from the index again
  });

  it('adds up the usage of several failed saves, and sends totals without usage as they came', async () => {
    const { sent, lifetimes } = setUp();
    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(10), usage: idle(60) }, { workloadId: 'w-2', totals: totals(7) }]);
    sent[0]?.fail();
    await settle();
    lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(20), usage: idle(30) }]);
    sent[1]?.fail();
    await settle();
    lifetimes.saveLifetimes([]);
    expect(sent[2]?.entries).to.deep.equal([
      { workloadId: 'w-1', totals: totals(20), usage: idle(90) },
      { workloadId: 'w-2', totals: totals(7) },
    ]);
  });
});
