// How long the event loop was held up lately: the longest single delay node:perf_hooks measured, over
// the last full window and the one in progress. A stall is therefore reported for one to two windows
// after it ended, long enough for a probe to see it, and forgotten after that.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface EventLoopLagOptions {
  /** Length of a window (ms). */
  windowMs: number;
  /** How often the loop is sampled (ms, default 20): delays shorter than this are not seen. */
  resolutionMs?: number;
}

export class EventLoopLag {
  readonly #options: EventLoopLagOptions;
  readonly #histogram: IntervalHistogram;
  #timer: NodeJS.Timeout | undefined;
  #previousMaxNs = 0;

  constructor(options: EventLoopLagOptions) {
    this.#options = options;
    this.#histogram = monitorEventLoopDelay({ resolution: options.resolutionMs ?? 20 });
  }

  get windowMs(): number {
    return this.#options.windowMs;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#histogram.enable();
    this.#timer = setInterval(() => {
      this.#previousMaxNs = this.#histogram.max;
      this.#histogram.reset();
    }, this.#options.windowMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#histogram.disable();
  }

  /** The longest the loop was held up in the last full window and the current one, in ms. */
  worstMs(): number {
    return Math.round(Math.max(this.#previousMaxNs, this.#histogram.max) / 1e6);
  }
}
