// The messages between the write thread (main thread, write-thread.ts) and its write worker. The
// replies and errors are those of the read workers (read-protocol.ts): plain data by structured clone.
import type { SeedWriter } from '../backend.js';
import type { LifetimeRepository } from '../../domain/telemetry.js';

/** The writes the worker runs, each in its own transaction, in the order they were sent. */
export const WRITE_METHODS = [
  'upsertWorkloads', 'upsertPodIntervals', 'writeWorkloads', 'closeOpenIntervals', 'deleteFinishedBatch', 'saveLifetimes',
] as const satisfies readonly (keyof SeedWriter | 'writeWorkloads' | keyof LifetimeRepository)[];
export type WriteMethod = (typeof WRITE_METHODS)[number];

/** What the worker is started with (worker_threads `workerData`). */
export interface WriteWorkerData {
  dbPath: string;
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
