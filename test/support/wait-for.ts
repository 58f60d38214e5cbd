// Polls a condition against a real server until it holds, with a deadline and a failure message that
// says what was awaited and what was last seen, instead of fixed sleeps.
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

export interface WaitForOptions {
  timeoutMs: number;
  /** What is awaited, for the failure message: "the pod watch to see p-1 Running". */
  what: string;
  /** Pause between attempts (default 100 ms). */
  intervalMs?: number;
}

/**
 * Calls `condition` until it returns a value other than undefined, null or false, and returns that
 * value. A throw (a failed assertion) counts as "not yet"; after `timeoutMs` the last throw or value
 * is reported in the error.
 */
export async function waitFor<T>(condition: () => T | undefined | null | false | Promise<T | undefined | null | false>, options: WaitForOptions): Promise<T> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let last: { error: unknown } | { value: unknown };
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      const seen = 'error' in last ? (last.error instanceof Error ? last.error.message : inspect(last.error)) : `the condition returned ${inspect(last.value)}`;
      throw new Error(`Timed out after ${Date.now() - started} ms waiting for ${options.what}: ${seen}`);
    }
    await sleep(options.intervalMs ?? 100);
  }
}
