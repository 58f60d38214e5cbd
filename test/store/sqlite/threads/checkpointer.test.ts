// The checkpointer of the index, on a real SQLite file: it copies what the writes leave in the
// write-ahead log back into the file on its own thread, and one that stops is started again.
import { expect } from 'chai';
import type { Worker } from 'node:worker_threads';
import { Checkpointer } from '../../../../src/store/sqlite/threads/checkpointer.js';
import { sqliteOnly } from '../../../support/backend.js';
import { waitFor } from '../../../support/wait-for.js';
import { aWorkload } from '../../../support/workload-builder.js';
import { openTempStore, type TempStore } from '../../temp-store.js';

/** [frames in the log, frames of it copied into the file], asked of the test's own connection without copying anything. */
function logFrames(t: TempStore): { log: number; checkpointed: number } {
  // A PASSIVE checkpoint of nothing left to copy reports the state as it is.
  return t.db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number; checkpointed: number };
}

const manyWorkloads = (from: number, count: number) => Array.from({ length: count }, (_, i) => aWorkload({ workloadId: `w-${from + i}` }));

sqliteOnly.describe('index checkpointer', function () {
  this.timeout(60_000);
  let t: TempStore;

  beforeEach(() => {
    t = openTempStore();
    // Only the checkpointer copies the log: the test's writes leave it all behind.
    t.db.pragma('wal_autocheckpoint = 0');
  });
  afterEach(() => t.close());

  it('copies the log the writes left behind into the file, on its own', async () => {
    const checkpointer = await Checkpointer.start({ dbPath: t.path, intervalMs: 50, logger: { warn() {} } });
    try {
      await t.store.upsertWorkloads(manyWorkloads(0, 3_000));
      await waitFor(() => checkpointer.status().checkpoints >= 2 && checkpointer.status().uncopiedFrames === 0, { timeoutMs: 10_000, what: 'a checkpoint that copied the whole log' });
      const frames = logFrames(t);
      expect(frames.log).to.be.greaterThan(0);
      expect(frames.checkpointed).to.equal(frames.log);
    } finally {
      await checkpointer.close();
    }
  });

  it('one that stops is started again after a pause, with a warning, and goes on copying', async () => {
    const workers: Worker[] = [];
    const warnings: { retryInMs?: number }[] = [];
    const checkpointer = await Checkpointer.start({
      dbPath: t.path, intervalMs: 50, restartDelayMs: 20, onWorker: (worker) => workers.push(worker), logger: { warn: (fields) => warnings.push(fields) },
    });
    try {
      await workers[0]?.terminate();
      await waitFor(() => workers.length === 2, { timeoutMs: 30_000, what: 'a second checkpointer' });
      expect(warnings[0]).to.deep.include({ exitCode: 1, retryInMs: 20 });
      const before = checkpointer.status().checkpoints;
      await t.store.upsertWorkloads(manyWorkloads(10_000, 2_000));
      await waitFor(() => checkpointer.status().checkpoints > before + 1 && checkpointer.status().uncopiedFrames === 0, { timeoutMs: 30_000, what: 'the new checkpointer to copy the log' });
      const frames = logFrames(t);
      expect(frames.checkpointed).to.equal(frames.log);
    } finally {
      await checkpointer.close();
    }
  });

  it('fails to start with the reason when the file is not there', async () => {
    const error = await Checkpointer.start({ dbPath: `${t.dir}/elsewhere/index.db`, logger: { warn() {} } }).then(() => expect.fail('expected no start'), (e: unknown) => e as Error);
    expect(error.message).to.equal('Cannot open database because the directory does not exist');
  });
});
