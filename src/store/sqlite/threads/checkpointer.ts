// Starts and keeps the checkpoint worker (checkpoint-worker.ts) of an index file. A checkpointer
// that stops is started again after a pause that doubles with each stop in a row (a second, up to 30
// s); the log stays bounded meanwhile by the write worker's own checkpoints (FALLBACK_AUTOCHECKPOINT_PAGES).
import { Worker } from 'node:worker_threads';
import { deserializeError } from './worker-errors.js';
import { workerEntry } from '../../../runtime/worker-entry.js';
import type { CheckpointMessage, CheckpointWorkerData } from './write-protocol.js';

/**
 * The write worker's automatic checkpoint, in pages of the log (64 MiB at 4 KiB pages): it runs only
 * when the checkpointer falls that far behind or is down.
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 16_384;

export interface CheckpointerOptions {
  dbPath: string;
  /** Between two checkpoints; default 1 s: each page the writes keep changing is copied once a second at most. */
  intervalMs?: number;
  logger: { warn(fields: object, message: string): void };
  /** The worker's scheduling niceness (default 0: the process's). */
  niceness?: number;
  restartDelayMs?: number;
  /** Sees each worker as it is created (tests inject faults by terminating one). */
  onWorker?: (worker: Worker) => void;
}

const DEFAULT_INTERVAL_MS = 1000;
const DEFAULT_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;

export class Checkpointer {
  readonly #options: CheckpointerOptions;
  #worker: Worker | null = null;
  #stopsInARow = 0;
  #closed = false;
  #restartTimer: NodeJS.Timeout | null = null;
  /** Frames in the log at the last checkpoint, and how many of them it had copied. */
  #last = { walFrames: 0, copiedFrames: 0 };
  #checkpoints = 0;

  static async start(options: CheckpointerOptions): Promise<Checkpointer> {
    const checkpointer = new Checkpointer(options);
    await checkpointer.#spawn();
    return checkpointer;
  }

  private constructor(options: CheckpointerOptions) {
    this.#options = options;
  }

  /** Log frames not yet copied into the file at the last checkpoint, and checkpoints since the start. */
  status(): { uncopiedFrames: number; checkpoints: number } {
    return { uncopiedFrames: Math.max(0, this.#last.walFrames - this.#last.copiedFrames), checkpoints: this.#checkpoints };
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    await this.#worker?.terminate();
  }

  #spawn(): Promise<void> {
    const entry = workerEntry(import.meta.url, 'checkpoint-worker');
    const workerData: CheckpointWorkerData = {
      dbPath: this.#options.dbPath,
      intervalMs: this.#options.intervalMs ?? DEFAULT_INTERVAL_MS,
      niceness: this.#options.niceness ?? 0,
    };
    const worker = new Worker(entry.filename, { ...entry.options, workerData });
    this.#worker = worker;
    this.#options.onWorker?.(worker);
    let ready = false;
    let failure: Error | null = null;
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: CheckpointMessage) => {
        if (message.type === 'ready') {
          ready = true;
          resolve();
        } else if (message.type === 'failed') {
          failure = deserializeError(message.error);
          void worker.terminate();
        } else {
          this.#stopsInARow = 0;
          this.#checkpoints += 1;
          this.#last = { walFrames: message.walFrames, copiedFrames: message.copiedFrames };
        }
      });
      worker.on('error', (error) => {
        failure ??= error;
      });
      worker.on('exit', (code) => {
        if (!ready) {
          reject(failure ?? new Error(`Cannot start the index checkpointer: it stopped (exit code ${code}) before it opened the index`));
        }
        if (!this.#closed && ready) {
          this.#restartLater({ exitCode: code, err: failure ?? undefined }, 'Index checkpointer stopped; starting another');
        }
      });
    });
  }

  /** Starts another checkpointer after the pause, which doubles with each stop or failed start in a row. */
  #restartLater(fields: object, message: string): void {
    this.#stopsInARow += 1;
    const firstDelayMs = this.#options.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    const delayMs = Math.min(MAX_RESTART_DELAY_MS, firstDelayMs * 2 ** (this.#stopsInARow - 1));
    this.#options.logger.warn({ ...fields, retryInMs: delayMs }, message);
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (this.#closed) return;
      this.#spawn().catch((error: unknown) => this.#restartLater({ err: error }, 'Index checkpointer could not start; trying again'));
    }, delayMs);
    this.#restartTimer.unref();
  }
}
