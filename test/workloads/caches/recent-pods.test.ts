// The pods kept lately in case a DRA claim is reserved for them: bounded in time and in count, the
// oldest going first, and each taken once.
import { expect } from 'chai';
import { RecentPods } from '../../../src/workloads/caches/recent-pods.js';
import { aPod, podFacts } from '../fixtures.js';

const podNamed = (uid: string) => podFacts(aPod({ metadata: { uid } }));

describe('workloads/caches/recent-pods', () => {
  it('gives a pod back once, within its time', () => {
    const recent = new RecentPods({ keepMs: 1_000, limit: 10 });
    recent.put(podNamed('a'), 0);
    recent.put(podNamed('b'), 0);
    expect(recent.take('a', 999)?.uid).to.equal('a');
    expect(recent.take('a', 999)).to.equal(undefined);
    expect(recent.take('b', 1_001)).to.equal(undefined);
  });

  it('lets the oldest go past its limit or its time, and keeps a pod put again as new', () => {
    const recent = new RecentPods({ keepMs: 1_000, limit: 2 });
    recent.put(podNamed('a'), 0);
    recent.put(podNamed('b'), 10);
    recent.put(podNamed('a'), 20);
    recent.put(podNamed('c'), 30);
    expect([recent.size, recent.take('b', 40), recent.take('a', 40)?.uid]).to.deep.equal([2, undefined, 'a']);
    recent.put(podNamed('d'), 2_000);
    expect(recent.size, 'c is past its time').to.equal(1);
  });
});
