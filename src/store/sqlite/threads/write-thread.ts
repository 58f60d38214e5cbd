// The write side of the SQLite index on a worker thread (write-worker.ts). better-sqlite3 is
// synchronous: on the main thread, the writes of a busy cluster (about half of the main thread's time
// at a few thousand events/s, most of it SQLite's own work and the commits) held every watch event,
// probe and request while they ran, and the service could not parse the next events while SQLite
// committed the last ones. Here the main thread only clones each call's rows to the worker.
//
// One worker, one connection: SQLite has one writer per file, so a second worker would only wait for
// the lock. Calls are sent as they come and run one at a time in that order, each in its own
// transaction. A worker that dies fails its running and waiting calls (callers write again what failed:
// every write is idempotent) and is replaced at once; one that cannot start is retried after a pause
// that doubles with each failure in a row, and the calls made meanwhile fail rather than wait.
// close() lets the calls already made finish, so the last flush of a shutdown is written. Beside the
// worker runs the checkpointer (checkpointer.ts), which copies the log back into the file so that the
// writes never wait for that copy.
import { Worker } from 'node:worker_threads';
import type { LifetimeSave } from '../../../domain/telemetry.js';
import { forwardingSeedWriter, type SeedWriter } from '../../ports.js';
import { Checkpointer, FALLBACK_AUTOCHECKPOINT_PAGES } from './checkpointer.js';
import { deserializeError } from './worker-errors.js';
import type { WorkerMessage } from './read-protocol.js';
import { workerEntry } from '../../../runtime/worker-entry.js';
import type { WriteMethod, WriteRequest, WriteWorkerData } from './write-protocol.js';

/** pino-compatible subset. */
export interface WriteThreadLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface WriteThreadOptions {
  /** The index file; the main thread has opened (and migrated) it already. */
  dbPath: string;
  /** The time each write stamps (updated_at, GPU-hours of running pods): the service's clock. */
  clock: { now(): number };
  logger?: WriteThreadLogger;
  /** Pause before retrying a worker that could not start; default 1 s, doubling up to 30 s. */
  restartDelayMs?: number;
  /** Scheduling niceness of the write worker and the checkpointer (default 0: the process's). */
  niceness?: number;
  /** Sees each worker as it is created (tests inject faults by terminating one). */
  onWorker?: (worker: Worker) => void;
}

export interface WriteThreadStatus {
  /** Writes sent and not answered yet (running or waiting in the worker). */
  pending: number;
  /** Workers that died (or could not start) and were replaced, since the thread opened. */
  restarts: number;
  /** Pages of the write-ahead log not copied into the file at the last checkpoint. */
  uncheckpointedPages: number;
}

interface Call {
  request: WriteRequest;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

const DEFAULT_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
const silent: WriteThreadLogger = { warn() {}, error() {} };

export class SqliteWriteThread {
  /** The store's writes, each run by the worker in its own transaction. */
  readonly writer: SeedWriter = forwardingSeedWriter((method, args) => this.#call(method, args));
  readonly #options: WriteThreadOptions;
  readonly #logger: WriteThreadLogger;
  readonly #calls = new Map<number, Call>();
  #worker: Worker | null = null;
  #ready = false;
  #failure: Error | null = null;
  #nextId = 1;
  #restarts = 0;
  #failedStarts = 0;
  #opened = false;
  #closing = false;
  #restartTimer: NodeJS.Timeout | null = null;
  #drained: (() => void) | null = null;
  #checkpointer: Checkpointer | null = null;

  /** Starts the worker and resolves once it has opened the file; rejects with its failure. */
  static async open(options: WriteThreadOptions): Promise<SqliteWriteThread> {
    const thread = new SqliteWriteThread(options);
    await thread.#spawn();
    try {
      thread.#checkpointer = await Checkpointer.start({ dbPath: options.dbPath, logger: thread.#logger, niceness: options.niceness });
    } catch (error) {
      await thread.close();
      throw error;
    }
    thread.#opened = true;
    return thread;
  }

  private constructor(options: WriteThreadOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silent;
  }

  saveLifetimes(entries: readonly LifetimeSave[]): Promise<void> {
    return this.#call('saveLifetimes', [entries]);
  }

  status(): WriteThreadStatus {
    return { pending: this.#calls.size, restarts: this.#restarts, uncheckpointedPages: this.#checkpointer?.status().uncopiedFrames ?? 0 };
  }

  /** Waits for the writes already made, then stops the worker. Later calls fail. Safe to call twice. */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    if (this.#calls.size > 0 && this.#ready) await new Promise<void>((resolve) => (this.#drained = resolve));
    await this.#worker?.terminate();
    await this.#checkpointer?.close();
  }

  #call<T>(method: WriteMethod, args: unknown[]): Promise<T> {
    if (this.#closing) return Promise.reject(new Error(`Cannot write the index: the write thread is closed (${method})`));
    const worker = this.#worker;
    if (worker === null || !this.#ready) {
      const cause = this.#failure === null ? '' : `: ${this.#failure.message}`;
      return Promise.reject(
        new Error(`Cannot write the index: its write worker is restarting${cause}`, { cause: this.#failure ?? undefined }),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const request: WriteRequest = { id: this.#nextId++, method, args, now: this.#options.clock.now() };
      try {
        worker.postMessage(request);
      } catch (error) {
        // Arguments that cannot be cloned: a caller's bug.
        reject(error as Error);
        return;
      }
      this.#calls.set(request.id, { request, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #spawn(): Promise<void> {
    const entry = workerEntry(import.meta.url, 'write-worker');
    const workerData: WriteWorkerData = {
      dbPath: this.#options.dbPath,
      autoCheckpointPages: FALLBACK_AUTOCHECKPOINT_PAGES,
      niceness: this.#options.niceness ?? 0,
    };
    const worker = new Worker(entry.filename, { ...entry.options, workerData });
    this.#worker = worker;
    this.#ready = false;
    this.#failure = null;
    this.#options.onWorker?.(worker);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          this.#ready = true;
          this.#failedStarts = 0;
          resolve();
        } else if (message.type === 'failed') {
          this.#failure = deserializeError(message.error);
          void worker.terminate();
        } else {
          this.#settle(message);
        }
      });
      worker.on('error', (error) => {
        this.#failure ??= error;
      });
      worker.on('exit', (code) => {
        const wasReady = this.#ready;
        this.#ready = false;
        const cause = this.#failure === null ? '' : `: ${this.#failure.message}`;
        for (const call of this.#calls.values()) {
          const what = this.#closing ? 'the write thread closed' : `its worker stopped (exit code ${code}${cause})`;
          call.reject(new Error(`Cannot write the index: ${what} during ${call.request.method}`, { cause: this.#failure ?? undefined }));
        }
        this.#calls.clear();
        this.#drained?.();
        if (!wasReady) {
          reject(this.#failure ?? new Error(`Cannot start the write worker: it stopped (exit code ${code}) before it opened the index`));
        }
        if (this.#opened && !this.#closing) this.#replace(wasReady, code);
      });
    });
  }

  #settle(message: Extract<WorkerMessage, { type: 'reply' }>): void {
    const call = this.#calls.get(message.id);
    if (call === undefined) return;
    this.#calls.delete(message.id);
    if (message.ok) call.resolve(message.value);
    else call.reject(deserializeError(message.error));
    if (this.#calls.size === 0) this.#drained?.();
  }

  /** After the worker stopped without close(): start another, at once if it was running, after a pause if it never started. */
  #replace(wasReady: boolean, code: number): void {
    this.#restarts += 1;
    const fields = { exitCode: code, err: this.#failure ?? undefined };
    if (wasReady) {
      this.#logger.warn(fields, 'Write worker stopped; starting another');
      this.#spawn().catch(() => {}); // a failed start comes back here through its exit
      return;
    }
    this.#failedStarts += 1;
    const firstDelayMs = this.#options.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    const delayMs = Math.min(MAX_RESTART_DELAY_MS, firstDelayMs * 2 ** (this.#failedStarts - 1));
    this.#logger.error({ ...fields, retryInMs: delayMs }, 'Write worker could not start');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (!this.#closing) this.#spawn().catch(() => {});
    }, delayMs);
    this.#restartTimer.unref();
  }
}
