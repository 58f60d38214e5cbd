// New XID errors from dcgm-exporter's "last XID" field: a change to another non-zero code is one new
// error; the first value seen of a GPU is its baseline.
import { expect } from 'chai';
import { XidWatch } from '../../../src/telemetry/scrape/xid-watch.js';

const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);

/** The new errors of one GPU's successive values, 15 s apart. */
function newErrors(watch: XidWatch, gpuKey: string, xids: number[], from = T0): boolean[] {
  return xids.map((xid, i) => watch.observe(gpuKey, xid, from + i * 15_000));
}

describe('telemetry: new XID errors', () => {
  it('takes the first value of a GPU as its baseline, old error or not', () => {
    const watch = new XidWatch();
    expect(newErrors(watch, 'GPU-a', [79, 79])).to.deep.equal([false, false]);
    expect(newErrors(watch, 'GPU-b', [0])).to.deep.equal([false]);
  });

  it('counts 0 → 79 once, not 79 → 79, then 79 → 13, and not the return to 0', () => {
    const watch = new XidWatch();
    expect(newErrors(watch, 'GPU-a', [0, 79, 79, 79, 13, 0, 13])).to.deep.equal([false, true, false, false, true, false, true]);
  });

  it('keeps each GPU apart and lets a blank value change nothing', () => {
    const watch = new XidWatch();
    newErrors(watch, 'GPU-a', [0]);
    newErrors(watch, 'GPU-b', [0]);
    expect(newErrors(watch, 'GPU-a', [NaN, 79, NaN, 79], T0 + 15_000)).to.deep.equal([false, true, false, false]);
    expect(watch.observe('GPU-b', 0, T0 + 90_000)).to.equal(false);
  });

  it('ignores a value older than the newest one seen of its GPU', () => {
    const watch = new XidWatch();
    newErrors(watch, 'GPU-a', [79], T0 + 60_000);
    expect(watch.observe('GPU-a', 0, T0)).to.equal(false);
    expect(watch.observe('GPU-a', 79, T0 + 75_000)).to.equal(false);
  });

  it('forgets GPUs silent since a time: their next value is a baseline again', () => {
    const watch = new XidWatch();
    newErrors(watch, 'GPU-a', [0], T0);
    newErrors(watch, 'GPU-b', [0], T0 + 60_000);
    expect(watch.forgetBefore(T0 + 60_000)).to.equal(1);
    expect(watch.size).to.equal(1);
    expect(watch.observe('GPU-a', 79, T0 + 120_000)).to.equal(false);
    expect(watch.observe('GPU-b', 79, T0 + 120_000)).to.equal(true);
  });
});
