// The write worker of the SQLite index (write-thread.ts): its own read-write connection to the index
// file, with the store and the lifetime totals over it, running the writes one at a time in the
// order they come. Every write is one transaction of its own, as on the main thread; the main thread
// keeps parsing watch events, serving requests and probes while SQLite writes and commits here.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { Clock } from '../../../domain/clock.js';
import { niceThisThread } from '../../../runtime/thread-priority.js';
import { boundSeedWriter } from '../../ports.js';
import { executorOf, sqliteWriter } from '../connection-ports.js';
import { openDatabase, type Database } from '../database.js';
import { lifetimeSaves, SqliteLifetimeStore } from '../lifetime-store.js';
import { serializeError } from './worker-errors.js';
import type { WorkerMessage } from './read-protocol.js';
import { post } from './worker-port.js';
import { WRITE_METHODS, type WriteRequest, type WriteWorkerData } from './write-protocol.js';

function serve(port: MessagePort, data: WriteWorkerData): void {
  niceThisThread(data.niceness);
  let db: Database;
  try {
    db = openDatabase(data.dbPath, { mustExist: true, servesReads: false });
  } catch (error) {
    post(port, { type: 'failed', error: serializeError(error) });
    return;
  }
  // The checkpointer copies the log back into the file on its own thread; this connection does it
  // only past a bound, when the checkpointer is behind or down.
  db.pragma(`wal_autocheckpoint = ${data.autoCheckpointPages}`);
  // The time of the write being run: the main thread's clock when it was called.
  let now = 0;
  const clock: Clock = { now: () => now };
  const writer = sqliteWriter(db, { clock });
  const targets = {
    ...boundSeedWriter(writer),
    saveLifetimes: lifetimeSaves(new SqliteLifetimeStore(db), { executor: executorOf(db), writer }),
  };

  const answer = async (request: WriteRequest): Promise<WorkerMessage> => {
    if (!(WRITE_METHODS as readonly string[]).includes(request.method)) {
      const error = new Error(`Cannot write the index: "${String(request.method)}" is not a write method`);
      return { type: 'reply', id: request.id, ok: false, error: serializeError(error) };
    }
    try {
      now = request.now;
      const value: unknown = await Reflect.apply(targets[request.method] as (...args: unknown[]) => unknown, undefined, request.args);
      return { type: 'reply', id: request.id, ok: true, value: value ?? null };
    } catch (error) {
      return { type: 'reply', id: request.id, ok: false, error: serializeError(error) };
    }
  };

  // Chained, so that the writes run in the order they were sent even where one awaits.
  let previous: Promise<void> = Promise.resolve();
  port.on('message', (request: WriteRequest) => {
    previous = previous.then(async () => post(port, await answer(request)));
  });
  post(port, { type: 'ready' });
}

if (parentPort === null) throw new Error('write-worker.ts runs as the worker thread of the index writes, not on its own');
serve(parentPort, workerData as WriteWorkerData);
