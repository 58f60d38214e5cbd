// settle(): runs every promise continuation that is ready.
import { setImmediate as settle } from 'node:timers/promises';
import { expect } from 'chai';
import sinon from 'sinon';
import { RetentionJob, type RetentionLogger, type RetentionOptions, type SetTimer } from '../../../src/store/retention/retention-job.js';
import { sqliteOnly } from '../../support/backend.js';
import { openTestIndex } from '../../support/test-index.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { at, openTempStore } from '../temp-store.js';

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
  const delays = () => live().map((timer) => timer.delayMs);
  /** Fires the oldest live timer, then lets the promise continuations it released run. */
  const fireNext = async () => {
    const timer = live()[0];
    if (timer === undefined) throw new Error('No timer is pending');
    timer.cancelled = true;
    timer.callback();
    await settle();
  };
  return { setTimer, live, delays, fireNext };
}

function fakeLogger() {
  return { info: sinon.spy(), error: sinon.spy() } satisfies RetentionLogger;
}

/** A purger whose calls return `batches` in turn, then 0. */
function purgerOf(batches: number[]) {
  const stub = sinon.stub<[number, number], Promise<number>>();
  batches.forEach((n, i) => stub.onCall(i).resolves(n));
  stub.resolves(0);
  return { deleteFinishedBatch: stub };
}

const base = (extra: Partial<RetentionOptions> = {}): RetentionOptions => ({
  retentionDays: 1, intervalMs: 60_000, clock: { now: () => NOW }, logger: fakeLogger(), ...extra,
});

describe('store/retention', () => {
  it('deletes rows finished more than retentionDays ago and logs how many', async () => {
    const store = purgerOf([3]);
    const logger = fakeLogger();
    const job = new RetentionJob(store, base({ retentionDays: 400, logger, batchSize: 500 }));

    expect(await job.runOnce()).to.equal(3);
    expect(store.deleteFinishedBatch.calledOnceWithExactly(NOW - 400 * DAY_MS, 500)).to.equal(true);
    expect(logger.info.firstCall.args[0]).to.include({ deleted: 3, batches: 1 });
    expect(job.status()).to.deep.equal({ lastRunAt: NOW, lastDeleted: 3, consecutiveFailures: 0 });
  });

  it('deletes one batch per step and waits batchPauseMs on the timer before the next, until a batch comes back short', async () => {
    const store = purgerOf([2, 2, 1]);
    const timers = manualTimers();
    const job = new RetentionJob(store, base({ batchSize: 2, batchPauseMs: 15, setTimer: timers.setTimer }));

    const pass = job.runOnce();
    expect(store.deleteFinishedBatch.callCount).to.equal(1);
    await settle();
    expect(timers.delays()).to.deep.equal([15]);
    expect(job.runOnce(), 'a second call while the pass runs').to.equal(pass);

    await timers.fireNext();
    expect(store.deleteFinishedBatch.callCount).to.equal(2);
    await timers.fireNext();
    expect(store.deleteFinishedBatch.callCount).to.equal(3);
    expect(await pass).to.equal(5);
    expect(timers.live()).to.deep.equal([]);
  });

  it('does not run during start(): the first pass comes after firstRunDelayMs, then one every interval after the last ended', async () => {
    const store = purgerOf([]);
    const timers = manualTimers();
    const job = new RetentionJob(store, base({ firstRunDelayMs: 5000, setTimer: timers.setTimer }));

    job.start();
    job.start(); // already started: no second loop
    expect(store.deleteFinishedBatch.callCount).to.equal(0);
    expect(timers.delays()).to.deep.equal([5000]);

    await timers.fireNext();
    expect(store.deleteFinishedBatch.callCount).to.equal(1);
    expect(timers.delays()).to.deep.equal([60_000]);
    await timers.fireNext();
    await timers.fireNext();
    expect(store.deleteFinishedBatch.callCount).to.equal(3);

    job.stop();
    expect(timers.live()).to.deep.equal([]);
  });

  it('logs a failed run and retries it at the next interval', async () => {
    const store = purgerOf([]);
    store.deleteFinishedBatch.onFirstCall().rejects(new Error('database is locked'));
    store.deleteFinishedBatch.onSecondCall().resolves(2);
    const logger = fakeLogger();
    const timers = manualTimers();
    const job = new RetentionJob(store, base({ intervalMs: 1000, logger, setTimer: timers.setTimer }));

    job.start();
    await timers.fireNext();
    expect(logger.error.calledOnce).to.equal(true);
    expect(logger.error.firstCall.args[0]).to.include({ consecutiveFailures: 1 });
    expect(job.status().consecutiveFailures).to.equal(1);
    expect(timers.delays()).to.deep.equal([1000]);

    await timers.fireNext();
    expect(job.status()).to.deep.include({ lastDeleted: 2, consecutiveFailures: 0 });
    job.stop();
  });

  it('stop() ends a pass at its pause and never calls the store again', async () => {
    const store = purgerOf([4, 4, 4, 4]);
    const logger = fakeLogger();
    const timers = manualTimers();
    const job = new RetentionJob(store, base({ batchSize: 4, logger, setTimer: timers.setTimer }));
    job.start();
    await timers.fireNext(); // the first pass: one batch, then its pause
    expect(store.deleteFinishedBatch.callCount).to.equal(1);

    job.stop();
    await settle();
    expect(timers.live()).to.deep.equal([]);
    expect(store.deleteFinishedBatch.callCount).to.equal(1);
    expect(logger.info.firstCall.args[0]).to.include({ deleted: 4, stopped: true });
  });

  it('rejects a non-positive retention, interval or batch size and a negative wait', () => {
    const store = purgerOf([]);
    expect(() => new RetentionJob(store, base({ retentionDays: 0 }))).to.throw(/retentionDays/);
    expect(() => new RetentionJob(store, base({ intervalMs: 0 }))).to.throw(/intervalMs/);
    expect(() => new RetentionJob(store, base({ batchSize: 0 }))).to.throw(/batchSize/);
    expect(() => new RetentionJob(store, base({ batchSize: 2.5 }))).to.throw(/batchSize/);
    expect(() => new RetentionJob(store, base({ batchPauseMs: -1 }))).to.throw(/batchPauseMs/);
    expect(() => new RetentionJob(store, base({ firstRunDelayMs: Number.NaN }))).to.throw(/firstRunDelayMs/);
  });

  it('does not keep the process alive with its default timer', () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const before = timeouts();
    const job = new RetentionJob(purgerOf([]), base({ intervalMs: 3_600_000 }));
    job.start();
    try {
      expect(timeouts()).to.equal(before);
    } finally {
      job.stop();
    }
  });

  describe('on a real index', () => {
    it('removes expired workloads and their pods', async () => {
      const t = await openTestIndex({ clock: { now: () => NOW } });
      try {
        const expired = aWorkload({ completedAt: NOW - 31 * DAY_MS });
        const kept = aWorkload({ completedAt: NOW - 29 * DAY_MS });
        await t.seed.upsertWorkloads([expired, kept]);
        await t.seed.upsertPodIntervals([aPodInterval(expired), aPodInterval(kept)]);
        const job = new RetentionJob(t.seed, base({ retentionDays: 30 }));

        expect(await job.runOnce()).to.equal(1);
        expect(await t.countRows()).to.equal(1);
        expect(Number((await t.sql('SELECT COUNT(*) AS n FROM workload_pods'))[0]?.n)).to.equal(1);
      } finally {
        await t.close();
      }
    });

    sqliteOnly.it('lets other work run between its batches: reads on the event loop see the pass half done', async () => {
      const t = openTempStore();
      try {
        await t.store.upsertWorkloads(Array.from({ length: 11 }, () => aWorkload({ completedAt: NOW - 31 * DAY_MS })));
        // The default timer, as in the service: whatever the event loop has queued runs in the pauses.
        const job = new RetentionJob(t.store, base({ retentionDays: 30, batchSize: 3, batchPauseMs: 1 }));
        const seen: number[] = [];
        let reading = true;
        const read = () => {
          if (!reading) return;
          const rows = t.countRows();
          if (seen.at(-1) !== rows) seen.push(rows);
          setImmediate(read);
        };
        setImmediate(read);

        const deleted = await job.runOnce();
        reading = false;

        expect(deleted).to.equal(11);
        // 11 → 8 → 5 → 2 → 0. The first pause may end before the loop gets to the reader (timers run
        // before immediates), every later one leaves it a turn.
        expect(seen).to.include.members([5, 2]);
      } finally {
        t.close();
      }
    });
  });
});
