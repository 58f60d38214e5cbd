// Keeps finished workloads for `retention_days` after they completed, then deletes them (DECISIONS
// "Status and times"). Runs at start and every interval; a failed run is logged and retried on the
// next tick, never thrown into the process.
import type { Clock } from '../domain/clock.js';

const DAY_MS = 86_400_000;

/** The part of the store retention needs. */
export interface FinishedWorkloadPurger {
  deleteFinishedBefore(cutoffMs: number): number;
}

/** pino-compatible subset. */
export interface RetentionLogger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface TimerHandle {
  cancel(): void;
}

/** Schedules `callback` once after `delayMs`; the default unrefs the timer so it never keeps the process alive. */
export type SetTimer = (callback: () => void, delayMs: number) => TimerHandle;

export interface RetentionOptions {
  retentionDays: number;
  intervalMs: number;
  clock: Clock;
  logger: RetentionLogger;
  setTimer?: SetTimer;
}

export interface RetentionStatus {
  lastRunAt: number | null;
  lastDeleted: number;
  /** Consecutive failed runs; 0 after a success. */
  consecutiveFailures: number;
}

const unrefTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
};

export class RetentionJob {
  readonly #store: FinishedWorkloadPurger;
  readonly #options: Required<RetentionOptions>;
  #timer: TimerHandle | null = null;
  #running = false;
  #status: RetentionStatus = { lastRunAt: null, lastDeleted: 0, consecutiveFailures: 0 };

  constructor(store: FinishedWorkloadPurger, options: RetentionOptions) {
    if (!(options.retentionDays > 0)) throw new Error(`Invalid retention: "retentionDays" must be positive, got ${options.retentionDays}`);
    if (!(options.intervalMs > 0)) throw new Error(`Invalid retention: "intervalMs" must be positive, got ${options.intervalMs}`);
    this.#store = store;
    this.#options = { ...options, setTimer: options.setTimer ?? unrefTimer };
  }

  /** Runs once now, then every intervalMs until stop(). Calling it again while started does nothing. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  stop(): void {
    this.#running = false;
    this.#timer?.cancel();
    this.#timer = null;
  }

  /** Deletes the expired rows now; returns how many workloads were deleted. Throws what the store throws. */
  runOnce(): number {
    const now = this.#options.clock.now();
    const cutoff = now - this.#options.retentionDays * DAY_MS;
    const deleted = this.#store.deleteFinishedBefore(cutoff);
    this.#status = { lastRunAt: now, lastDeleted: deleted, consecutiveFailures: 0 };
    this.#options.logger.info({ deleted, cutoff: new Date(cutoff).toISOString() }, 'Retention deleted finished workloads');
    return deleted;
  }

  status(): RetentionStatus {
    return { ...this.#status };
  }

  #tick(): void {
    try {
      this.runOnce();
    } catch (error) {
      this.#status = { ...this.#status, consecutiveFailures: this.#status.consecutiveFailures + 1 };
      this.#options.logger.error({ err: error, consecutiveFailures: this.#status.consecutiveFailures }, 'Retention run failed; retrying at the next interval');
    }
    // stop() may have been called from inside runOnce (through the logger or the store).
    if (this.#running) this.#timer = this.#options.setTimer(() => this.#tick(), this.#options.intervalMs);
  }
}
