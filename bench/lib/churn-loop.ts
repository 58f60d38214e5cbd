// Drives a PodChurn at a steady rate for a fixed time: the events due by the clock are made in bursts of
// at most 10 ms worth per turn of the event loop, so that the watch sockets this process serves keep
// draining between bursts; with nothing due it sleeps a millisecond rather than spin, since the
// service under test needs the other core.
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { ChurnStep, PodChurn } from './pod-churn.js';

export interface ChurnLoopOutcome {
  emitted: number;
  byKind: Record<string, number>;
  windowSeconds: number;
  /** Why the stream stopped early (a pool of the churn ran dry); undefined when it ran its time. */
  error?: string;
}

export async function runChurnLoop(
  churn: PodChurn,
  options: { rate: number; seconds: number; onStep?: (step: ChurnStep) => void; onTurn?: () => void },
): Promise<ChurnLoopOutcome> {
  const byKind: Record<string, number> = {};
  let emitted = 0;
  const windowMs = options.seconds * 1000;
  const burst = Math.max(1, Math.ceil(options.rate / 100));
  const started = performance.now();
  const outcome = (error?: string): ChurnLoopOutcome => ({ emitted, byKind, windowSeconds: (performance.now() - started) / 1000, ...(error === undefined ? {} : { error }) });
  for (;;) {
    const elapsed = performance.now() - started;
    if (elapsed >= windowMs) return outcome();
    const due = Math.min(Math.floor((options.rate * elapsed) / 1000) - emitted, burst);
    for (let i = 0; i < due; i += 1) {
      const step = churn.step();
      if (step === undefined) return outcome(`The pod stream ran dry at ${emitted} events: pools ${JSON.stringify(churn.pools())}`);
      emitted += 1;
      byKind[step.kind] = (byKind[step.kind] ?? 0) + 1;
      options.onStep?.(step);
    }
    options.onTurn?.();
    if (due <= 0) await sleep(1);
    else await yieldToLoop();
  }
}
