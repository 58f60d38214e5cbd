// The index's writes on the write worker, against the same real SQLite file the main thread reads:
// every write the store makes, with the main thread's clock, in the order they were made; errors of
// the store as the store throws them; a worker that dies fails what it held and is replaced; close()
// lets the writes already made finish. And the lifetime totals saved through it.
import { expect } from 'chai';
import { renameSync, existsSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import type { LifetimeTotals } from '../../../../src/domain/telemetry.js';
import { SqliteLifetimeStore } from '../../../../src/store/sqlite/lifetime-store.js';
import { AsyncLifetimes } from '../../../../src/store/sqlite/async-lifetimes.js';
import { SqliteWriteThread } from '../../../../src/store/sqlite/threads/write-thread.js';
import { sqliteOnly } from '../../../support/backend.js';
import { rejectionOf } from '../../../support/rejection.js';
import { threadsAtNiceness } from '../../../support/thread-niceness.js';
import { waitFor } from '../../../support/wait-for.js';
import { aPodInterval, aWorkload } from '../../../support/workload-builder.js';
import { at, HOUR_MS, openTempStore, type TempStore } from '../../temp-store.js';

const NOW = at('2026-11-20T12:00:00Z');

/** Enough rows to keep the worker busy for a while (hundreds of ms). */
const manyWorkloads = (count: number) => Array.from({ length: count }, (_, i) => aWorkload({ workloadId: `bulk-${i}`, submittedAt: NOW - HOUR_MS - i }));

sqliteOnly.describe('write thread', function () {
  // Each worker start loads it through tsx: about a second on a busy machine.
  this.timeout(60_000);
  let t: TempStore;
  let clock: { now(): number };

  beforeEach(() => {
    t = openTempStore();
    clock = { now: () => NOW };
  });
  afterEach(() => t.close());

  it('writes rows, intervals and closings that the main thread reads back, stamped with the main thread\'s clock', async () => {
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock });
    try {
      const running = aWorkload({ workloadId: 'w-run', status: 'running', startedAt: NOW - 2 * HOUR_MS, completedAt: null, gpuCount: 4 });
      expect(await thread.writer.writeWorkloads([running], [aPodInterval(running, { finishedAt: null })])).to.deep.equal({ rows: 1, intervals: 1 });
      expect(await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-2' })])).to.equal(1);

      const view = await t.index.get('w-run', NOW);
      expect(view?.status).to.equal('running');
      // The GPU-hours of the open interval run to the main thread's `now`: 4 GPUs × 2 h.
      expect(view?.gpuHoursUsed).to.equal(8);
      const updatedAt = t.db.prepare('SELECT updated_at FROM workloads WHERE workload_id = ?').pluck().get('w-run');
      expect(updatedAt).to.equal(NOW);

      expect(await thread.writer.closeOpenIntervals(['w-run'], NOW - HOUR_MS)).to.equal(1);
      expect((await t.index.get('w-run', NOW))?.gpuHoursUsed).to.equal(4);
      expect(await thread.writer.writeWorkloads([], [])).to.deep.equal({ rows: 0, intervals: 0 });
    } finally {
      await thread.close();
    }
  });

  it('runs writes made one after the other, without awaiting, in that order', async () => {
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock });
    try {
      const versions = Array.from({ length: 50 }, (_, i) => aWorkload({ workloadId: 'w-1', submittedBy: `user-${i}`, resourceVersion: String(i + 1) }));
      const written = await Promise.all(versions.map((version) => thread.writer.upsertWorkloads([version])));
      expect(written).to.deep.equal(versions.map(() => 1));
      expect((await t.index.get('w-1', NOW))?.submittedBy).to.equal('user-49');
    } finally {
      await thread.close();
    }
  });

  it('fails with the store\'s own error, and keeps writing after it', async () => {
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock });
    try {
      const error = await rejectionOf(thread.writer.deleteFinishedBatch(NOW, 0));
      expect(error.message).to.equal('Cannot delete finished workloads: "limit" must be a positive integer, got 0');
      const broken = await rejectionOf(thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-x', status: 'sleeping' as never })]));
      expect(broken).to.be.instanceOf(BetterSqlite3.SqliteError);
      expect((broken as { code?: string }).code).to.match(/^SQLITE_CONSTRAINT/);
      expect(await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-ok' })])).to.equal(1);
    } finally {
      await thread.close();
    }
  });

  it('a worker terminated during a write fails the writes it held with an error naming them, and is replaced', async () => {
    const workers: Worker[] = [];
    const warnings: object[] = [];
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock, onWorker: (worker) => workers.push(worker), logger: { warn: (fields) => warnings.push(fields), error() {} } });
    try {
      const running = rejectionOf(thread.writer.upsertWorkloads(manyWorkloads(20_000)));
      const waiting = rejectionOf(thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-after' })]));
      expect(thread.status()).to.include({ pending: 2, restarts: 0 });
      await workers[0]?.terminate();

      expect((await running).message).to.equal('Cannot write the index: its worker stopped (exit code 1) during upsertWorkloads');
      expect((await waiting).message).to.equal('Cannot write the index: its worker stopped (exit code 1) during upsertWorkloads');
      // The transaction that was running was rolled back whole, not half written.
      expect([0, 20_000]).to.include(t.countRows());
      expect(warnings).to.deep.equal([{ exitCode: 1, err: undefined }]);

      await waitFor(async () => (await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-after' })]).catch(() => -1)) === 1, { timeoutMs: 30_000, what: 'the replacement worker to write' });
      expect(workers).to.have.length(2);
      expect(thread.status()).to.include({ pending: 0, restarts: 1 });
      expect((await t.index.get('w-after', NOW))?.workloadId).to.equal('w-after');
    } finally {
      await thread.close();
    }
  });

  it('while no replacement can start, fails writes at once, then retries with a growing pause until one starts', async () => {
    const workers: Worker[] = [];
    const errors: { retryInMs?: number }[] = [];
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock, restartDelayMs: 50, onWorker: (worker) => workers.push(worker), logger: { warn() {}, error: (fields) => errors.push(fields) } });
    try {
      renameSync(t.path, `${t.path}.away`); // the main thread's connection keeps its open file
      await workers[0]?.terminate();
      await waitFor(() => errors.length >= 2, { timeoutMs: 30_000, what: 'a second failed start' });
      expect(errors[1]?.retryInMs, 'the pause doubles').to.equal(100);
      expect(existsSync(t.path), 'a worker never creates the file').to.equal(false);
      expect((await rejectionOf(thread.writer.upsertWorkloads([aWorkload()]))).message).to.match(/^Cannot write the index: its write worker is restarting: unable to open database file/);

      renameSync(`${t.path}.away`, t.path);
      await waitFor(async () => (await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-back' })]).catch(() => -1)) === 1, { timeoutMs: 30_000, what: 'a worker to start once the file is back' });
      expect((await t.index.get('w-back', NOW))?.workloadId).to.equal('w-back');
    } finally {
      if (existsSync(`${t.path}.away`)) renameSync(`${t.path}.away`, t.path);
      await thread.close();
    }
  });

  it('runs the write worker and the checkpointer at the niceness it is given, and the main thread at its own', async function () {
    if (process.platform !== 'linux') this.skip(); // per-thread niceness is read from /proc
    const before = threadsAtNiceness(13);
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock, niceness: 13 });
    try {
      await waitFor(() => threadsAtNiceness(13) === before + 2, { what: 'two threads at niceness 13', timeoutMs: 5000 });
      expect(await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-nice' })])).to.equal(1);
      expect((await t.index.get('w-nice', NOW))?.workloadId).to.equal('w-nice');
    } finally {
      await thread.close();
    }
  });

  it('close() lets the writes already made finish, then refuses later ones', async () => {
    const thread = await SqliteWriteThread.open({ dbPath: t.path, clock });
    const bulk = thread.writer.upsertWorkloads(manyWorkloads(5_000));
    const last = thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-last' })]);
    await thread.close();
    expect(await bulk).to.equal(5_000);
    expect(await last).to.equal(1);
    expect(t.countRows()).to.equal(5_001);
    expect((await rejectionOf(thread.writer.upsertWorkloads([aWorkload()]))).message).to.equal('Cannot write the index: the write thread is closed (upsertWorkloads)');
    await thread.close();
  });

  it('fails to open with the worker\'s reason when the file is not there, and creates nothing', async () => {
    const error = await rejectionOf(SqliteWriteThread.open({ dbPath: `${t.dir}/elsewhere/index.db`, clock }));
    expect(error.message).to.equal('Cannot open database because the directory does not exist');
    expect(existsSync(`${t.dir}/elsewhere`)).to.equal(false);
  });

  describe('lifetime totals saved through it', () => {
    const totals = (sum: number): LifetimeTotals => ({ gpu_utilization: { count: 1, sum, min: sum, max: sum, current: sum } });

    it('reads a saved total back at once, before the worker has committed it, and from the file after', async () => {
      const thread = await SqliteWriteThread.open({ dbPath: t.path, clock });
      const stored = new SqliteLifetimeStore(t.db);
      const lifetimes = new AsyncLifetimes({ stored, writes: thread, logger: { error() {} } });
      try {
        await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-1' })]);
        lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(40) }]);
        expect(lifetimes.loadLifetime('w-1')).to.deep.equal(totals(40));
        await waitFor(() => lifetimes.unsaved === 0, { timeoutMs: 10_000, what: 'the save to commit' });
        expect(stored.loadLifetime('w-1')).to.deep.equal(totals(40));
        expect(lifetimes.loadLifetime('w-1')).to.deep.equal(totals(40));
      } finally {
        await thread.close();
      }
    });

    it('keeps a failed save, logs it, and sends it again with the next one', async () => {
      const errors: object[] = [];
      let fail = true;
      const thread = await SqliteWriteThread.open({ dbPath: t.path, clock });
      const writes = { saveLifetimes: (entries: Parameters<SqliteWriteThread['saveLifetimes']>[0]) => (fail ? Promise.reject(new Error('disk full')) : thread.saveLifetimes(entries)) };
      const stored = new SqliteLifetimeStore(t.db);
      const lifetimes = new AsyncLifetimes({ stored, writes, logger: { error: (fields) => errors.push(fields) } });
      try {
        await thread.writer.upsertWorkloads([aWorkload({ workloadId: 'w-1' }), aWorkload({ workloadId: 'w-2' })]);
        lifetimes.saveLifetimes([{ workloadId: 'w-1', totals: totals(10) }]);
        await waitFor(() => errors.length === 1, { timeoutMs: 10_000, what: 'the failed save to be logged' });
        expect(lifetimes.loadLifetime('w-1')).to.deep.equal(totals(10));
        expect(stored.loadLifetime('w-1')).to.equal(undefined);

        fail = false;
        lifetimes.saveLifetimes([{ workloadId: 'w-2', totals: totals(20) }]);
        await waitFor(() => lifetimes.unsaved === 0, { timeoutMs: 10_000, what: 'both totals to commit' });
        expect(stored.loadLifetime('w-1')).to.deep.equal(totals(10));
        expect(stored.loadLifetime('w-2')).to.deep.equal(totals(20));
      } finally {
        await thread.close();
      }
    });
  });
});
