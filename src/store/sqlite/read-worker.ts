// A read worker of the read pool (read-pool.ts): its own read-only connection to the index file and
// a SqliteWorkloadStore over it, answering one WorkloadIndex call at a time. Each call runs in one
// read transaction, so a call of several statements (a list page and its count, statistics and
// their groups) sees one snapshot, as it does on the main thread where no write can come between.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { Clock } from '../../domain/clock.js';
import { openDatabase, type Database } from './database.js';
import { serializeError } from './read-errors.js';
import { READ_METHODS, type ReadRequest, type ReadWorkerData, type WorkerMessage } from './read-protocol.js';
import { post } from './worker-port.js';
import { SqliteWorkloadStore } from './workload-store.js';

// Every read takes its `now` from the caller, that is from the main thread's clock. A worker asking a
// clock of its own would read another time than the main thread (a test's fixed clock, a benchmark's
// shifted one): fail loudly instead.
const noClock: Clock = {
  now() {
    throw new Error('Cannot read the time in a read worker: reads take `now` from the caller');
  },
};

function serve(port: MessagePort, data: ReadWorkerData): void {
  let db: Database;
  try {
    db = openDatabase(data.dbPath, { readonly: true });
  } catch (error) {
    post(port, { type: 'failed', error: serializeError(error) });
    return;
  }
  const store = new SqliteWorkloadStore(db, { clock: noClock });
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');

  const answer = async (request: ReadRequest): Promise<WorkerMessage> => {
    if (!(READ_METHODS as readonly string[]).includes(request.method)) {
      return { type: 'reply', id: request.id, ok: false, error: serializeError(new Error(`Cannot read the index: "${String(request.method)}" is not a read method`)) };
    }
    try {
      begin.run();
      const method = store[request.method] as (...args: unknown[]) => Promise<unknown>;
      const value = await Reflect.apply(method, store, request.args);
      return { type: 'reply', id: request.id, ok: true, value };
    } catch (error) {
      return { type: 'reply', id: request.id, ok: false, error: serializeError(error) };
    } finally {
      if (db.inTransaction) commit.run();
    }
  };

  // The pool sends one call at a time; chaining keeps two from sharing a transaction all the same.
  // Whatever escapes a call (a failed COMMIT) is an unhandled rejection, which stops the worker: the
  // pool fails that call and starts another worker.
  let previous: Promise<void> = Promise.resolve();
  port.on('message', (request: ReadRequest) => {
    previous = previous.then(async () => post(port, await answer(request)));
  });
  post(port, { type: 'ready' });
}

if (parentPort === null) throw new Error('read-worker.ts runs as a worker thread of the read pool, not on its own');
serve(parentPort, workerData as ReadWorkerData);
