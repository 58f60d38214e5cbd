// A task run every `intervalMs` (measured from the end of one run to the start of the next, so a slow
// run never overlaps the next) until stop(). A long run may watch the signal that stop() aborts. A
// run that throws is reported and the loop goes on.
import { setTimeout as sleep } from 'node:timers/promises';

export type Delay = (ms: number, signal: AbortSignal) => Promise<void>;

/** Resolves after `ms`, or as soon as `signal` aborts; its timer never keeps the process alive. */
export const realDelay: Delay = (ms, signal) => sleep(ms, undefined, { signal, ref: false }).catch(() => undefined);

export interface Periodic {
  /** Ends the loop; resolves once a run in progress has finished. */
  stop(): Promise<void>;
}

export function runPeriodically(
  intervalMs: number,
  run: (signal: AbortSignal) => void | Promise<void>,
  options: { delay?: Delay; onError: (error: unknown) => void },
): Periodic {
  const delay = options.delay ?? realDelay;
  const controller = new AbortController();
  const loop = (async () => {
    while (!controller.signal.aborted) {
      await delay(intervalMs, controller.signal);
      if (controller.signal.aborted) return;
      try {
        await run(controller.signal);
      } catch (error) {
        options.onError(error);
      }
    }
  })();
  return {
    async stop() {
      controller.abort();
      await loop;
    },
  };
}
