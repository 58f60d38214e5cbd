// The read side of the index (the WorkloadIndex port) on worker threads. better-sqlite3 is
// synchronous: on the main thread one statistics query over a million rows holds every watch event,
// index write, probe and request for a few hundred ms. Here each call goes to one of `size` workers,
// each with its own read-only connection to the same file. In WAL mode a reader sees every write
// committed before its call began and never waits for the writer, so the main thread keeps only the
// writes, the HTTP work and the cloning of arguments and results, and reads use the second core.
//
// A worker runs one call at a time; calls beyond the idle workers wait in one FIFO queue, bounded:
// past `maxQueue` waiting calls a new one is refused at once (IndexBusyError, which the API answers
// with 503 and Retry-After) rather than queued for longer than any client waits. Heavy calls
// (statistics, rankings, usage) leave one worker to the others, so that a burst of them does not hold
// up list pages. A worker that dies fails its call with an error (a 500 through the normal error path)
// and is replaced at once; one that cannot start is retried after a pause that doubles with each
// failure in a row.
import { Worker } from 'node:worker_threads';
import { IndexBusyError, type WorkloadIndex } from '../../../query/ports.js';
import { forwardingIndex, type ReadMethod } from '../../reads/read-methods.js';
import { deserializeError } from './worker-errors.js';
import type { ReadRequest, ReadWorkerData, WorkerMessage } from './read-protocol.js';
import { workerEntry } from '../../../runtime/worker-entry.js';

/** pino-compatible subset. */
export interface ReadPoolLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface ReadPoolOptions {
  /** The index file; the main thread has opened (and migrated) it already. */
  dbPath: string;
  /** Worker threads, at least 1. */
  size: number;
  /** Calls that may wait for a worker; default 128. */
  maxQueue?: number;
  logger?: ReadPoolLogger;
  /** Pause before retrying a worker that could not start; default 1 s, doubling up to 30 s. */
  restartDelayMs?: number;
  /** Sees each worker as it is created (tests inject faults by terminating one). */
  onWorker?: (worker: Worker) => void;
}

export interface ReadPoolStatus {
  /** Workers started and answering. */
  ready: number;
  /** Workers running a call. */
  busy: number;
  /** Calls waiting for a worker. */
  queued: number;
  /** Workers that died (or could not start) and were replaced, since the pool opened. */
  restarts: number;
}

interface Call {
  request: ReadRequest;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  call: Call | null;
  /** Why the worker failed or stopped, when it said (startup error, uncaught exception). */
  failure: Error | null;
}

const DEFAULT_MAX_QUEUE = 128;
// A full queue of page-sized reads drains in well under a second; a client told to wait longer would
// stay away while workers idle.
const RETRY_AFTER_SECONDS = 1;
// Calls that scan many rows (tens to hundreds of ms at a million workloads). With two workers or
// more, they never hold them all: one stays for the page-sized reads (list, get, describe,
// activeGpus), which would otherwise wait behind a burst of statistics.
const HEAVY_METHODS: ReadonlySet<ReadMethod> = new Set([
  'stats', 'queuePercentiles', 'trends', 'rankByGpuHours', 'rankByQueue', 'rankByUsage', 'usage',
]);
const DEFAULT_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
const silent: ReadPoolLogger = { warn() {}, error() {} };

export class ReadPool {
  /** The read port, each call answered by a worker. */
  readonly index: WorkloadIndex = forwardingIndex((method, args) => this.#call(method, args));
  readonly #options: Required<Omit<ReadPoolOptions, 'onWorker'>> & Pick<ReadPoolOptions, 'onWorker'>;
  readonly #slots = new Set<Slot>();
  readonly #queue: Call[] = [];
  #nextId = 1;
  #restarts = 0;
  /** Worker starts that failed since a worker last started: the retry pause doubles with each. */
  #failedStarts = 0;
  /** False while open() starts the first workers: a failure then fails open(), nothing is replaced. */
  #opened = false;
  #closed = false;
  #restartTimer: NodeJS.Timeout | null = null;

  /** Starts the workers and resolves once every one has opened the file; rejects with the first failure. */
  static async open(options: ReadPoolOptions): Promise<ReadPool> {
    if (!(Number.isInteger(options.size) && options.size >= 1)) {
      throw new Error(`Cannot start the read pool: "size" must be a positive integer, got ${options.size}`);
    }
    const pool = new ReadPool(options);
    const started = await Promise.allSettled(Array.from({ length: options.size }, () => pool.#spawn()));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) {
      await pool.close();
      throw failed.reason;
    }
    pool.#opened = true;
    return pool;
  }

  private constructor(options: ReadPoolOptions) {
    this.#options = {
      ...options,
      maxQueue: options.maxQueue ?? DEFAULT_MAX_QUEUE,
      logger: options.logger ?? silent,
      restartDelayMs: options.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS,
    };
  }

  status(): ReadPoolStatus {
    let ready = 0;
    let busy = 0;
    for (const slot of this.#slots) {
      if (slot.ready) ready += 1;
      if (slot.call !== null) busy += 1;
    }
    return { ready, busy, queued: this.#queue.length, restarts: this.#restarts };
  }

  /** Fails waiting and running calls and stops the workers. Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    const closed = new Error('Cannot read the index: the read pool is closed');
    for (const call of this.#queue.splice(0)) call.reject(closed);
    // Each worker's exit handler fails its running call.
    await Promise.all([...this.#slots].map((slot) => slot.worker.terminate()));
  }

  #call<T>(method: ReadMethod, args: unknown[]): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('Cannot read the index: the read pool is closed'));
    return new Promise<T>((resolve, reject) => {
      const call: Call = { request: { id: this.#nextId++, method, args }, resolve: resolve as (value: unknown) => void, reject };
      const idle = this.#idleSlot();
      if (idle !== undefined && this.#mayStart(method)) return this.#send(idle, call);
      if (this.#queue.length >= this.#options.maxQueue) {
        return reject(new IndexBusyError(
          `The index is busy: ${this.#queue.length} reads are waiting for a worker; retry shortly`,
          RETRY_AFTER_SECONDS,
        ));
      }
      this.#queue.push(call);
    });
  }

  #idleSlot(): Slot | undefined {
    for (const slot of this.#slots) if (slot.ready && slot.call === null) return slot;
    return undefined;
  }

  #send(slot: Slot, call: Call): void {
    try {
      slot.worker.postMessage(call.request);
      slot.call = call;
    } catch (error) {
      // Arguments that cannot be cloned (a function, a class instance with private state): a caller's bug.
      call.reject(error as Error);
    }
  }

  /** Whether a call of `method` may take an idle worker now: a heavy one never takes the last one. */
  #mayStart(method: ReadMethod): boolean {
    if (!HEAVY_METHODS.has(method) || this.#options.size < 2) return true;
    let heavy = 0;
    for (const slot of this.#slots) if (slot.call !== null && HEAVY_METHODS.has(slot.call.request.method)) heavy += 1;
    return heavy < this.#options.size - 1;
  }

  /** Gives idle workers the oldest waiting calls that may start. */
  #dispatch(): void {
    for (let idle = this.#idleSlot(); idle !== undefined; idle = this.#idleSlot()) {
      const next = this.#queue.findIndex((call) => this.#mayStart(call.request.method));
      if (next === -1) return;
      this.#send(idle, this.#queue.splice(next, 1)[0] as Call);
    }
  }

  #spawn(): Promise<void> {
    const entry = workerEntry(import.meta.url, 'read-worker');
    const workerData: ReadWorkerData = { dbPath: this.#options.dbPath };
    const worker = new Worker(entry.filename, { ...entry.options, workerData });
    const slot: Slot = { worker, ready: false, call: null, failure: null };
    this.#slots.add(slot);
    this.#options.onWorker?.(worker);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          slot.ready = true;
          this.#failedStarts = 0;
          resolve();
          this.#dispatch();
        } else if (message.type === 'failed') {
          slot.failure = deserializeError(message.error);
          void worker.terminate();
        } else {
          this.#settle(slot, message);
        }
      });
      worker.on('error', (error) => {
        slot.failure ??= error;
      });
      worker.on('exit', (code) => {
        this.#slots.delete(slot);
        const cause = slot.failure === null ? '' : `: ${slot.failure.message}`;
        if (slot.call !== null) {
          const what = this.#closed ? 'the read pool closed' : `its worker stopped (exit code ${code}${cause})`;
          slot.call.reject(
            new Error(`Cannot read the index: ${what} during ${slot.call.request.method}`, { cause: slot.failure ?? undefined }),
          );
          slot.call = null;
          this.#dispatch(); // a waiting heavy call may take another idle worker now
        }
        if (!slot.ready) {
          reject(slot.failure ?? new Error(`Cannot start a read worker: it stopped (exit code ${code}) before it opened the index`));
        }
        if (this.#opened && !this.#closed) this.#replace(slot, code);
      });
    });
  }

  #settle(slot: Slot, message: Extract<WorkerMessage, { type: 'reply' }>): void {
    const call = slot.call;
    if (call === null || call.request.id !== message.id) return;
    slot.call = null;
    if (message.ok) call.resolve(message.value);
    else call.reject(deserializeError(message.error));
    this.#dispatch();
  }

  /** After a worker stopped without close(): start another, at once if it was running, after a pause if it never started. */
  #replace(dead: Slot, code: number): void {
    this.#restarts += 1;
    const fields = { exitCode: code, err: dead.failure ?? undefined };
    if (dead.ready) {
      this.#options.logger.warn(fields, 'Read worker stopped; starting another');
      this.#spawn().catch(() => {}); // a failed start comes back here through its exit
      return;
    }
    this.#failedStarts += 1;
    const delayMs = Math.min(MAX_RESTART_DELAY_MS, this.#options.restartDelayMs * 2 ** (this.#failedStarts - 1));
    this.#options.logger.error({ ...fields, retryInMs: delayMs }, 'Read worker could not start');
    // With no worker left to answer them, the waiting calls would wait for as long as the cause lasts.
    if (![...this.#slots].some((slot) => slot.ready)) {
      const cause = dead.failure === null ? '' : `: ${dead.failure.message}`;
      const failure = new Error(`Cannot read the index: no read worker could start${cause}`);
      for (const call of this.#queue.splice(0)) call.reject(failure);
    }
    if (this.#restartTimer !== null) return;
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (this.#closed) return;
      for (let missing = this.#options.size - this.#slots.size; missing > 0; missing -= 1) this.#spawn().catch(() => {});
    }, delayMs);
    this.#restartTimer.unref();
  }
}
