// The messages between the read pool (main thread) and its read workers. Everything crosses the
// thread boundary by structured clone, so only plain data travels: objects, arrays, Maps, and errors
// flattened to their fields (read-errors.ts).
import type { ReadMethod } from '../../reads/read-methods.js';

/** What a worker is started with (worker_threads `workerData`). */
export interface ReadWorkerData {
  dbPath: string;
}

/** An error as it crosses threads: enough to rebuild the same kind of error on the other side. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  /** The error's own data fields: SQLite's result code (`code: 'SQLITE_CORRUPT'`), a layer's `details`... */
  fields: Record<string, unknown>;
}

/** Main thread → worker: one call of a read method. */
export interface ReadRequest {
  id: number;
  method: ReadMethod;
  args: unknown[];
}

/** Worker → main thread: once after start, then one reply per request. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: SerializedError }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: SerializedError };
