// A watchdog on the injected clock and delay: it fires once `lastActivity` is older than `limitMs`.
// Used for a silent watch stream and for a LIST whose pages stopped coming; the caller's signal ends it.
import type { Clock } from '../domain/clock.js';

export interface IdleGuardOptions {
  limitMs: number;
  clock: Clock;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Ends the guard without firing. */
  signal: AbortSignal;
  lastActivity: () => number;
  /** Called with the idle time once the limit is reached. */
  onIdle: (idleMs: number) => void;
}

export async function guardIdle(options: IdleGuardOptions): Promise<void> {
  while (!options.signal.aborted) {
    const idle = options.clock.now() - options.lastActivity();
    if (idle >= options.limitMs) return options.onIdle(idle);
    // Sleep only until the earliest moment the limit could be reached, then look again.
    await options.delay(options.limitMs - idle, options.signal).catch(() => undefined);
  }
}
