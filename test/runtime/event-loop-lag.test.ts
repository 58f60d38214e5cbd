// The event loop's delay over windows, with the clock and the drift timer driven by hand: a stall is
// never lost at a window's edge, is seen before the late timer even runs, and is forgotten after two
// windows. The real thing (a process held up, seen through /livez) is in test/admin/liveness.test.ts.
import { expect } from 'chai';
import sinon from 'sinon';
import { EventLoopLag } from '../../src/runtime/event-loop-lag.js';

describe('runtime/event-loop-lag', () => {
  let timers: sinon.SinonFakeTimers;
  let now: number;
  let lag: EventLoopLag;

  beforeEach(() => {
    timers = sinon.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    now = 0;
    lag = new EventLoopLag({ windowMs: 1_000, resolutionMs: 100, now: () => now });
    lag.start();
  });
  afterEach(() => {
    lag.stop();
    timers.restore();
  });

  /** `ms` of time during which the drift timer runs on time. */
  function runFor(ms: number): void {
    for (let left = ms; left > 0; left -= 100) {
      now += 100;
      timers.tick(100);
    }
  }

  /** The loop held up for `ms` right after a tick: time passes, no timer runs until it is free. */
  const stall = (ms: number) => void (now += ms);
  /** The loop is free again: the overdue timer runs at once. */
  const freed = () => void timers.next();

  it('reports nothing but the timer\'s own slack while the loop runs freely', () => {
    runFor(3_000);
    expect(lag.worstMs()).to.equal(0);
  });

  // The delay is how late the timer ran: a 2,400 ms stall that began just after a tick holds up the
  // timer due 100 ms later by 2,300 ms (as perf_hooks counts it too).
  it('sees a stall before the late timer has run, then keeps it for one to two windows', () => {
    runFor(500);
    stall(2_400);
    expect(lag.worstMs(), 'a probe answered before the late timer').to.equal(2_300);
    freed(); // 2,900 ms since the window began: the delay is noted, then a new window starts
    expect(lag.worstMs()).to.equal(2_300);
    runFor(900);
    expect(lag.worstMs(), 'a window later').to.equal(2_300);
    runFor(1_000);
    expect(lag.worstMs(), 'two windows later').to.equal(0);
  });

  it('keeps a stall whose late timer is also the one that closes the window', () => {
    runFor(900);
    stall(1_100);
    freed(); // 2,000 ms since the window began: this tick notes the delay, then starts a new window
    expect(lag.worstMs()).to.equal(1_000);
    runFor(900);
    expect(lag.worstMs()).to.equal(1_000);
  });
});
