// How long the event loop was held up lately: a timer due every `resolutionMs` notes how late it ran,
// and the longest delay is kept over the last full window and the one in progress. A stall is
// therefore reported for one to two windows after it ended, long enough for a probe to see it.
// A drift timer rather than perf_hooks' monitorEventLoopDelay: resetting that histogram at a window's
// end also drops the delay it has not recorded yet, and lost about one stall in ten when a window
// ended right after it.

export interface EventLoopLagOptions {
  /** Length of a window (ms). */
  windowMs: number;
  /** How often the timer is due (ms, default 100 or a quarter of the window): shorter delays blur. */
  resolutionMs?: number;
  /** A monotonic clock in ms (default performance.now). */
  now?: () => number;
}

export class EventLoopLag {
  readonly windowMs: number;
  readonly #resolutionMs: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #lastTick = 0;
  #windowStart = 0;
  #currentMax = 0;
  #previousMax = 0;

  constructor(options: EventLoopLagOptions) {
    this.windowMs = options.windowMs;
    this.#resolutionMs = options.resolutionMs ?? Math.min(100, options.windowMs / 4);
    this.#now = options.now ?? (() => performance.now());
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#lastTick = this.#windowStart = this.#now();
    this.#timer = setInterval(() => this.#tick(), this.#resolutionMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The longest the loop was held up (ms) in the last full window and the current one, the delay
   * of the timer now due included (a probe may be answered before that timer runs).
   */
  worstMs(): number {
    const pending = this.#timer === undefined ? 0 : this.#lateBy(this.#now());
    return Math.round(Math.max(this.#previousMax, this.#currentMax, pending));
  }

  #tick(): void {
    const now = this.#now();
    this.#currentMax = Math.max(this.#currentMax, this.#lateBy(now));
    this.#lastTick = now;
    // Rotated here, after the delay was noted, so that a stall always lands in some window.
    if (now - this.#windowStart >= this.windowMs) {
      this.#previousMax = this.#currentMax;
      this.#currentMax = 0;
      this.#windowStart = now;
    }
  }

  #lateBy(now: number): number {
    return Math.max(0, now - this.#lastTick - this.#resolutionMs);
  }
}
