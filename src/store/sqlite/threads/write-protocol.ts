// The messages between the write thread (main thread, write-thread.ts) and its write worker. The
// replies and errors are those of the read workers (read-protocol.ts): plain data by structured clone.
import { SEED_WRITER_METHODS } from '../../ports.js';
import type { SerializedError } from './read-protocol.js';

/** The writes the worker runs, each in its own transaction, in the order they were sent: the store's, and the lifetime totals' save. */
export const WRITE_METHODS = [...SEED_WRITER_METHODS, 'saveLifetimes'] as const;
export type WriteMethod = (typeof WRITE_METHODS)[number];

/** What the worker is started with (worker_threads `workerData`). */
export interface WriteWorkerData {
  dbPath: string;
  /** The connection's own automatic checkpoint, in log pages (the checkpointer does the rest). */
  autoCheckpointPages: number;
  /** The thread's scheduling niceness (runtime/thread-priority.ts). */
  niceness: number;
}

/**
 * Main thread → worker: one write. `now` is the main thread's clock when the call was made: the
 * times a write stamps (updated_at, the GPU-hours of running pods) are those a write on the main
 * thread would have stamped, a test's fixed clock included.
 */
export interface WriteRequest {
  id: number;
  method: WriteMethod;
  args: unknown[];
  now: number;
}

/** What the checkpointer is started with. */
export interface CheckpointWorkerData {
  dbPath: string;
  intervalMs: number;
  niceness: number;
}

/** Checkpointer → main thread. */
export type CheckpointMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: SerializedError }
  | { type: 'checkpointed'; walFrames: number; copiedFrames: number };
