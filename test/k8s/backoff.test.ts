import { expect } from 'chai';
import { Backoff } from '../../src/k8s/backoff.js';

describe('Backoff', () => {
  it('grows by the factor up to the max with full jitter scaling the cap', () => {
    const backoff = new Backoff({ baseMs: 100, maxMs: 1000, factor: 3, jitter: 'full', random: () => 0.5 });
    expect([1, 2, 3, 4].map(() => backoff.next())).to.deep.equal([50, 150, 450, 500]);
    expect(backoff.attempts).to.equal(4);
  });

  it('keeps equal jitter within the upper half of the cap', () => {
    const low = new Backoff({ baseMs: 100, maxMs: 1000, jitter: 'equal', random: () => 0 });
    const high = new Backoff({ baseMs: 100, maxMs: 1000, jitter: 'equal', random: () => 0.999 });
    expect([1, 2, 3].map(() => low.next())).to.deep.equal([50, 100, 200]);
    expect([1, 2, 3].map(() => high.next())).to.deep.equal([100, 200, 400]);
  });

  it('starts again from the base after reset', () => {
    const backoff = new Backoff({ baseMs: 100, maxMs: 1000, jitter: 'full', random: () => 0.999 });
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.attempts).to.equal(0);
    expect(backoff.next()).to.equal(100);
  });

  it('rejects a base that is not positive or above the max', () => {
    expect(() => new Backoff({ baseMs: 0, maxMs: 10 })).to.throw('Cannot create backoff: need 0 < baseMs <= maxMs, got baseMs 0 and maxMs 10');
    expect(() => new Backoff({ baseMs: 20, maxMs: 10 })).to.throw('got baseMs 20 and maxMs 10');
  });
});
