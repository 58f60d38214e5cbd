// The read pool when workers fail: a worker terminated during a call fails that call with a clear
// error and is replaced (after a growing pause while none can start); close() fails what is waiting
// or running and stops every worker; a worker that cannot open the index fails the pool's start.
import { expect } from 'chai';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ApiError } from '../../../../src/domain/errors.js';
import { IndexBusyError } from '../../../../src/query/ports.js';
import { ReadPool } from '../../../../src/store/sqlite/threads/read-pool.js';
import { rejectionOf } from '../../../support/rejection.js';
import { waitFor } from '../../../support/wait-for.js';
import { aWorkload } from '../../../support/workload-builder.js';
import { at, inOrg, openTempStore, tempDir, type TempStore } from '../../temp-store.js';
import { sqliteOnly } from '../../../support/backend.js';

const NOW = at('2026-11-20T12:00:00Z');

// A read that keeps a worker busy for a while (tens of ms) on a tiny index: names for 200k ids.
const MANY_IDS = Array.from({ length: 200_000 }, (_, i) => `id-${i}`);

const exited = (worker: Worker) => new Promise<number>((resolve) => worker.once('exit', resolve));

sqliteOnly.describe('read pool faults', function () {
  // Each worker start loads it through tsx: about a second on a busy machine.
  this.timeout(60_000);
  let t: TempStore;

  beforeEach(async ()  => {
    t = openTempStore();
    await t.store.upsertWorkloads([aWorkload({ workloadId: 'w-1' }), aWorkload({ workloadId: 'w-2' })]);
  });
  afterEach(() => t.close());

  it('a worker terminated during a call fails that call with an error naming it, and is replaced', async () => {
    const workers: Worker[] = [];
    const warnings: object[] = [];
    const pool = await ReadPool.open({ dbPath: t.path, size: 1, onWorker: (worker) => workers.push(worker), logger: { warn: (fields) => warnings.push(fields), error() {} } });
    try {
      const running = rejectionOf(pool.index.describe(MANY_IDS, inOrg()));
      const waiting = pool.index.list(inOrg(), { limit: 10, after: null });
      expect(pool.status()).to.include({ busy: 1, queued: 1 });
      await workers[0]?.terminate();

      const error = await running;
      // A 500 through the error middleware: neither a client error nor a refusal to retry later.
      expect(error).not.to.be.instanceOf(ApiError);
      expect(error).not.to.be.instanceOf(IndexBusyError);
      expect(error.message).to.match(/^Cannot read the index: its worker stopped \(exit code 1\) during describe$/);
      // The waiting call is answered by the replacement.
      expect((await waiting).items.map((w) => w.workloadId)).to.have.members(['w-1', 'w-2']);
      expect(workers).to.have.length(2);
      expect(pool.status()).to.deep.equal({ ready: 1, busy: 0, queued: 0, restarts: 1 });
      expect(warnings).to.deep.equal([{ exitCode: 1, err: undefined }]);
      expect(await pool.index.activeGpus(inOrg())).to.equal(await t.index.activeGpus(inOrg()));
    } finally {
      await pool.close();
    }
  });

  it('with two workers, the other one keeps answering while the dead one is replaced', async () => {
    const workers: Worker[] = [];
    const pool = await ReadPool.open({ dbPath: t.path, size: 2, onWorker: (worker) => workers.push(worker) });
    try {
      const doomed = rejectionOf(pool.index.describe(MANY_IDS, inOrg()));
      const survivor = pool.index.get('w-2', NOW);
      await workers[0]?.terminate();
      expect((await doomed).message).to.equal('Cannot read the index: its worker stopped (exit code 1) during describe');
      expect((await survivor)?.workloadId).to.equal('w-2');
      // Served while the replacement is still starting.
      expect((await pool.index.get('w-1', NOW))?.workloadId).to.equal('w-1');
      await waitFor(() => pool.status().ready === 2, { timeoutMs: 30_000, what: 'the replacement worker to start' });
    } finally {
      await pool.close();
    }
  });

  it('when no replacement can start, fails the waiting calls, then retries until one starts', async () => {
    const workers: Worker[] = [];
    const errors: { retryInMs?: number }[] = [];
    const pool = await ReadPool.open({
      dbPath: t.path, size: 1, restartDelayMs: 50, onWorker: (worker) => workers.push(worker), logger: { warn() {}, error: (fields) => errors.push(fields) },
    });
    try {
      renameSync(t.path, `${t.path}.away`); // the main thread's connection keeps its open file
      const running = rejectionOf(pool.index.describe(MANY_IDS, inOrg()));
      const waiting = rejectionOf(pool.index.get('w-1', NOW));
      await workers[0]?.terminate();
      expect((await running).message).to.match(/its worker stopped .* during describe/);
      expect((await waiting).message).to.match(/^Cannot read the index: no read worker could start: /);
      await waitFor(() => errors.length >= 2, { timeoutMs: 30_000, what: 'a second failed start' });
      expect(errors[1]?.retryInMs, 'the pause doubles').to.equal(100);

      renameSync(`${t.path}.away`, t.path);
      await waitFor(() => pool.status().ready === 1, { timeoutMs: 30_000, what: 'a worker to start once the file is back' });
      expect((await pool.index.get('w-1', NOW))?.workloadId).to.equal('w-1');
    } finally {
      if (existsSync(`${t.path}.away`)) renameSync(`${t.path}.away`, t.path);
      await pool.close();
    }
  });

  it('close() fails running and waiting calls, stops every worker, and refuses later calls', async () => {
    const workers: Worker[] = [];
    const pool = await ReadPool.open({ dbPath: t.path, size: 1, onWorker: (worker) => workers.push(worker) });
    const exits = workers.map(exited);
    const running = rejectionOf(pool.index.describe(MANY_IDS, inOrg()));
    const waiting = rejectionOf(pool.index.usage(inOrg(), { from: null, to: NOW }));
    await pool.close();

    expect(await exits.at(0)).to.be.a('number');
    expect((await waiting).message).to.equal('Cannot read the index: the read pool is closed');
    expect((await running).message).to.equal('Cannot read the index: the read pool closed during describe');
    expect((await rejectionOf(pool.index.list(inOrg(), { limit: 1, after: null }))).message).to.equal('Cannot read the index: the read pool is closed');
    expect(pool.status()).to.deep.equal({ ready: 0, busy: 0, queued: 0, restarts: 0 });
    expect(workers).to.have.length(1); // nothing was restarted
    await pool.close(); // twice is fine
  });

  it('fails to open with the reason when a worker cannot open the index, and leaves no worker running', async () => {
    const dir = tempDir();
    try {
      const notADatabase = join(dir.dir, 'index.db');
      writeFileSync(notADatabase, 'this is not SQLite '.repeat(100));
      const workers: Worker[] = [];
      const error = await rejectionOf(ReadPool.open({ dbPath: notADatabase, size: 2, onWorker: (worker) => workers.push(worker) }));
      expect(error.message).to.include(`Cannot open index database "${notADatabase}": the file is not an SQLite database`);
      expect(workers).to.have.length(2);
      for (const worker of workers) expect(worker.threadId, 'a stopped worker has threadId -1').to.equal(-1);
      expect((await rejectionOf(ReadPool.open({ dbPath: join(dir.dir, 'missing.db'), size: 1 }))).message).to.match(/unable to open database file|no such file/i);
    } finally {
      dir.remove();
    }
  });
});
