// Jittered exponential backoff. Jitter spreads the retries of many reflectors (several resources on
// several clusters) that all failed at the same moment, e.g. when an API server restarts.

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /** "full": uniform in [0, cap]; "equal": uniform in [cap/2, cap] (default "full"). */
  jitter?: 'full' | 'equal';
  /** Uniform in [0, 1); passed in so tests can pin it (default Math.random). */
  random?: () => number;
}

export class Backoff {
  private failures = 0;
  private readonly factor: number;
  private readonly jitter: 'full' | 'equal';
  private readonly random: () => number;

  constructor(private readonly options: BackoffOptions) {
    if (!(options.baseMs > 0) || !(options.maxMs >= options.baseMs)) {
      throw new Error(`Cannot create backoff: need 0 < baseMs <= maxMs, got baseMs ${options.baseMs} and maxMs ${options.maxMs}`);
    }
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 'full';
    this.random = options.random ?? Math.random;
  }

  /** Failed attempts since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const cap = Math.min(this.options.maxMs, this.options.baseMs * this.factor ** this.failures);
    this.failures += 1;
    const r = this.random();
    return Math.round(this.jitter === 'full' ? r * cap : cap / 2 + (r * cap) / 2);
  }

  /** Called after a success so the next failure starts again from baseMs. */
  reset(): void {
    this.failures = 0;
  }
}
