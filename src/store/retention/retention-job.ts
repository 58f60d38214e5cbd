// Keeps finished workloads for `retention_days` after they completed, then deletes them (DECISIONS
// "Status and times"). The first pass runs a while after start(), never during startup; the next
// one an interval after the previous one ended. A failed pass is logged and retried at the next
// interval, never thrown into the process.
//
// SQLite runs on the event loop's thread, so a pass done in one go holds every request, timer and
// indexer write until it ends (225k expired rows: 18 s). A pass therefore deletes one bounded batch
// per step and waits a little between steps, through the timer: whatever is due runs in between.
import type { Clock } from '../../domain/clock.js';

const DAY_MS = 86_400_000;

/** The part of the store retention needs. */
export interface FinishedWorkloadPurger {
  /** Deletes up to `limit` workloads finished before `cutoffMs`; fewer than `limit` means none is left. */
  deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number>;
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
  /** Workloads deleted per step; default 500, about 30 ms of work with their pods and indexes. */
  batchSize?: number;
  /** Wait between two steps of a pass; default 20 ms. */
  batchPauseMs?: number;
  /** Wait from start() to the first pass; default 30 s, so that startup and the first listing come first. */
  firstRunDelayMs?: number;
}

export interface RetentionStatus {
  lastRunAt: number | null;
  lastDeleted: number;
  /** Consecutive failed runs; 0 after a success. */
  consecutiveFailures: number;
}

const DEFAULTS = { batchSize: 500, batchPauseMs: 20, firstRunDelayMs: 30_000 };

const unrefTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return { cancel: () => clearTimeout(timer) };
};

/** A pass in progress; stop() halts it at its next pause. */
interface Pass {
  halted: boolean;
  wake: (() => void) | null;
}

export class RetentionJob {
  readonly #store: FinishedWorkloadPurger;
  readonly #options: Required<RetentionOptions>;
  #timer: TimerHandle | null = null;
  #started = false;
  #pass: { state: Pass; done: Promise<number> } | null = null;
  #status: RetentionStatus = { lastRunAt: null, lastDeleted: 0, consecutiveFailures: 0 };

  constructor(store: FinishedWorkloadPurger, options: RetentionOptions) {
    const settings: Required<RetentionOptions> = {
      ...options,
      setTimer: options.setTimer ?? unrefTimer,
      batchSize: options.batchSize ?? DEFAULTS.batchSize,
      batchPauseMs: options.batchPauseMs ?? DEFAULTS.batchPauseMs,
      firstRunDelayMs: options.firstRunDelayMs ?? DEFAULTS.firstRunDelayMs,
    };
    if (!(settings.retentionDays > 0)) {
      throw new Error(`Invalid retention: "retentionDays" must be positive, got ${settings.retentionDays}`);
    }
    if (!(settings.intervalMs > 0)) throw new Error(`Invalid retention: "intervalMs" must be positive, got ${settings.intervalMs}`);
    if (!(Number.isInteger(settings.batchSize) && settings.batchSize > 0)) {
      throw new Error(`Invalid retention: "batchSize" must be a positive integer, got ${settings.batchSize}`);
    }
    for (const name of ['batchPauseMs', 'firstRunDelayMs'] as const) {
      if (!(settings[name] >= 0)) throw new Error(`Invalid retention: "${name}" must be 0 or more, got ${settings[name]}`);
    }
    this.#store = store;
    this.#options = settings;
  }

  /**
   * Schedules the first pass after firstRunDelayMs, then one every intervalMs until stop(). Calling it
   * again while started does nothing.
   */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#schedule(this.#options.firstRunDelayMs);
  }

  /** Cancels the next pass and ends the one in progress at its next pause; the store is not called again. */
  stop(): void {
    this.#started = false;
    this.#timer?.cancel();
    this.#timer = null;
    if (this.#pass !== null) {
      this.#pass.state.halted = true;
      this.#pass.state.wake?.();
    }
  }

  /**
   * Deletes the expired rows, one batch per step with a pause between steps; resolves with how many
   * workloads were deleted, rejects with what the store throws. While a pass is in progress, returns
   * that pass.
   */
  runOnce(): Promise<number> {
    if (this.#pass !== null) return this.#pass.done;
    const state: Pass = { halted: false, wake: null };
    // #run starts its first batch before it returns; a pass only ends after a later turn (async).
    const done = this.#run(state).finally(() => {
      if (this.#pass?.state === state) this.#pass = null;
    });
    this.#pass = { state, done };
    return done;
  }

  status(): RetentionStatus {
    return { ...this.#status };
  }

  async #run(pass: Pass): Promise<number> {
    const now = this.#options.clock.now();
    const cutoff = now - this.#options.retentionDays * DAY_MS;
    const { batchSize } = this.#options;
    let deleted = 0;
    let batches = 0;
    for (;;) {
      const batch = await this.#store.deleteFinishedBatch(cutoff, batchSize);
      deleted += batch;
      batches += 1;
      if (batch < batchSize) break;
      await this.#pause(pass);
      if (pass.halted) break;
    }
    this.#status = { lastRunAt: now, lastDeleted: deleted, consecutiveFailures: 0 };
    const fields = { deleted, batches, cutoff: new Date(cutoff).toISOString(), ...(pass.halted ? { stopped: true } : {}) };
    this.#options.logger.info(fields, 'Retention deleted finished workloads');
    return deleted;
  }

  /** Resolves after batchPauseMs, or at once when stop() wakes the pass. */
  #pause(pass: Pass): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#options.setTimer(() => {
        pass.wake = null;
        resolve();
      }, this.#options.batchPauseMs);
      pass.wake = () => {
        timer.cancel();
        pass.wake = null;
        resolve();
      };
    });
  }

  #schedule(delayMs: number): void {
    this.#timer = this.#options.setTimer(() => {
      this.#timer = null;
      void this.#tick();
    }, delayMs);
  }

  async #tick(): Promise<void> {
    try {
      await this.runOnce();
    } catch (error) {
      this.#status = { ...this.#status, consecutiveFailures: this.#status.consecutiveFailures + 1 };
      this.#options.logger.error(
        { err: error, consecutiveFailures: this.#status.consecutiveFailures },
        'Retention run failed; retrying at the next interval',
      );
    }
    // stop() may have been called during the pass (or from the logger); start() again may have scheduled one.
    if (this.#started && this.#timer === null) this.#schedule(this.#options.intervalMs);
  }
}
