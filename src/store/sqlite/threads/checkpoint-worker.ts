// The checkpointer of the SQLite index (write-thread.ts starts it beside the write worker): its own
// connection, copying the write-ahead log back into the file every `intervalMs` with a PASSIVE
// checkpoint, which never waits for the writer nor holds it up. Left to the writer's own automatic
// checkpoints, the copy ran inside a commit every thousand pages: about half of the write worker's
// time at 5,000 events/s, and a write waited behind each one.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { niceThisThread } from '../../../runtime/thread-priority.js';
import { openDatabase, type Database } from '../database.js';
import { serializeError } from './worker-errors.js';
import type { CheckpointWorkerData, CheckpointMessage } from './write-protocol.js';

function serve(port: MessagePort, data: CheckpointWorkerData): void {
  niceThisThread(data.niceness);
  let db: Database;
  try {
    db = openDatabase(data.dbPath, { mustExist: true, servesReads: false });
  } catch (error) {
    port.postMessage({ type: 'failed', error: serializeError(error) } satisfies CheckpointMessage);
    return;
  }
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const timer = setInterval(() => {
    // [busy, WAL frames, frames copied]. A failure (a busy lock, a full disk) is thrown: the worker
    // stops and the write thread starts another; meanwhile the writer's own checkpoints bound the log.
    const row = checkpoint.get() as { busy: number; log: number; checkpointed: number };
    port.postMessage({ type: 'checkpointed', walFrames: row.log, copiedFrames: row.checkpointed } satisfies CheckpointMessage);
  }, data.intervalMs);
  port.on('close', () => clearInterval(timer));
  port.postMessage({ type: 'ready' } satisfies CheckpointMessage);
}

if (parentPort === null) throw new Error('checkpoint-worker.ts runs as a worker thread of the index writes, not on its own');
serve(parentPort, workerData as CheckpointWorkerData);
