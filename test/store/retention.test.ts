import { expect } from 'chai';
import sinon from 'sinon';
import { RetentionJob, type RetentionLogger, type SetTimer } from '../../src/store/retention.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';
import { at, openTempStore } from './temp-store.js';

const NOW = at('2026-11-20T00:00:00Z');
const DAY_MS = 86_400_000;

/** Timers the test fires by hand. */
function manualTimers() {
  const pending: { callback: () => void; delayMs: number; cancelled: boolean }[] = [];
  const setTimer: SetTimer = (callback, delayMs) => {
    const timer = { callback, delayMs, cancelled: false };
    pending.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  };
  const live = () => pending.filter((timer) => !timer.cancelled);
  const fireNext = () => {
    const timer = live()[0];
    if (timer === undefined) throw new Error('No timer is pending');
    timer.cancelled = true;
    timer.callback();
  };
  return { setTimer, live, fireNext };
}

function fakeLogger() {
  return { info: sinon.spy(), error: sinon.spy() } satisfies RetentionLogger;
}

describe('store/retention', () => {
  it('deletes rows finished more than retentionDays ago and logs how many', () => {
    const store = { deleteFinishedBefore: sinon.stub().returns(3) };
    const logger = fakeLogger();
    const job = new RetentionJob(store, { retentionDays: 400, intervalMs: 1000, clock: { now: () => NOW }, logger });

    expect(job.runOnce()).to.equal(3);
    expect(store.deleteFinishedBefore.calledOnceWithExactly(NOW - 400 * DAY_MS)).to.equal(true);
    expect(logger.info.firstCall.args[0]).to.include({ deleted: 3 });
    expect(job.status()).to.deep.equal({ lastRunAt: NOW, lastDeleted: 3, consecutiveFailures: 0 });
  });

  it('runs at start and then every interval until stopped', () => {
    const store = { deleteFinishedBefore: sinon.stub().returns(0) };
    const timers = manualTimers();
    const job = new RetentionJob(store, { retentionDays: 1, intervalMs: 60_000, clock: { now: () => NOW }, logger: fakeLogger(), setTimer: timers.setTimer });

    job.start();
    job.start(); // already started: no second loop
    expect(store.deleteFinishedBefore.callCount).to.equal(1);
    expect(timers.live().map((timer) => timer.delayMs)).to.deep.equal([60_000]);

    timers.fireNext();
    timers.fireNext();
    expect(store.deleteFinishedBefore.callCount).to.equal(3);

    job.stop();
    expect(timers.live()).to.deep.equal([]);
  });

  it('logs a failed run and retries it at the next tick', () => {
    const store = { deleteFinishedBefore: sinon.stub() };
    store.deleteFinishedBefore.onFirstCall().throws(new Error('database is locked'));
    store.deleteFinishedBefore.onSecondCall().returns(2);
    const logger = fakeLogger();
    const timers = manualTimers();
    const job = new RetentionJob(store, { retentionDays: 1, intervalMs: 1000, clock: { now: () => NOW }, logger, setTimer: timers.setTimer });

    expect(() => job.start()).to.not.throw();
    expect(logger.error.calledOnce).to.equal(true);
    expect(logger.error.firstCall.args[0]).to.include({ consecutiveFailures: 1 });
    expect(job.status().consecutiveFailures).to.equal(1);

    timers.fireNext();
    expect(job.status()).to.deep.include({ lastDeleted: 2, consecutiveFailures: 0 });
    job.stop();
  });

  it('rejects a non-positive retention or interval', () => {
    const store = { deleteFinishedBefore: () => 0 };
    const base = { clock: { now: () => NOW }, logger: fakeLogger() };
    expect(() => new RetentionJob(store, { ...base, retentionDays: 0, intervalMs: 1 })).to.throw(/retentionDays/);
    expect(() => new RetentionJob(store, { ...base, retentionDays: 1, intervalMs: 0 })).to.throw(/intervalMs/);
  });

  it('does not keep the process alive with its default timer', () => {
    const store = { deleteFinishedBefore: () => 0 };
    const timeouts = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const before = timeouts();
    const job = new RetentionJob(store, { retentionDays: 1, intervalMs: 3_600_000, clock: { now: () => NOW }, logger: fakeLogger() });
    job.start();
    try {
      expect(timeouts()).to.equal(before);
    } finally {
      job.stop();
    }
  });

  it('removes expired workloads and their pods from a real index', () => {
    const t = openTempStore();
    try {
      const expired = aWorkload({ completedAt: NOW - 31 * DAY_MS });
      const kept = aWorkload({ completedAt: NOW - 29 * DAY_MS });
      t.store.upsertWorkloads([expired, kept]);
      t.store.upsertPodIntervals([aPodInterval(expired), aPodInterval(kept)]);
      const job = new RetentionJob(t.store, { retentionDays: 30, intervalMs: 1000, clock: { now: () => NOW }, logger: fakeLogger() });

      expect(job.runOnce()).to.equal(1);
      expect(t.store.countRows()).to.equal(1);
      expect(t.db.prepare('SELECT COUNT(*) FROM workload_pods').pluck().get()).to.equal(1);
    } finally {
      t.close();
    }
  });
});
