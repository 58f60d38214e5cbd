// A read worker of the read pool (read-pool.ts): its own read-only connection to the index file and
// the store's read port over it (connection-ports.ts), answering one WorkloadIndex call at a time. Each call runs in one
// read transaction, so a call of several statements (a list page and its count, statistics and
// their groups) sees one snapshot, as it does on the main thread where no write can come between.
// Every read takes its `now` from the caller, that is from the main thread's clock: the read port
// has no clock of its own, so a worker never reads another time than the main thread (a test's fixed
// clock, a benchmark's shifted one).
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { isReadMethod } from '../../reads/read-methods.js';
import { openDatabase, type Database } from '../database.js';
import { serializeError } from './worker-errors.js';
import type { ReadRequest, ReadWorkerData, WorkerMessage } from './read-protocol.js';
import { sqliteIndex } from '../connection-ports.js';
import { post } from './worker-port.js';

function serve(port: MessagePort, data: ReadWorkerData): void {
  let db: Database;
  try {
    db = openDatabase(data.dbPath, { readonly: true });
  } catch (error) {
    post(port, { type: 'failed', error: serializeError(error) });
    return;
  }
  const index = sqliteIndex(db);
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');

  const answer = async (request: ReadRequest): Promise<WorkerMessage> => {
    if (!isReadMethod(request.method)) {
      const error = new Error(`Cannot read the index: "${String(request.method)}" is not a read method`);
      return { type: 'reply', id: request.id, ok: false, error: serializeError(error) };
    }
    try {
      begin.run();
      const method = index[request.method] as (...args: unknown[]) => Promise<unknown>;
      const value = await Reflect.apply(method, index, request.args);
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
