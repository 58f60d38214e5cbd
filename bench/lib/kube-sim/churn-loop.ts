// Drives a PodChurn at a steady rate for a fixed time: the events due by the clock are made in bursts of
// at most 10 ms of work per turn of the event loop, so that the watch sockets this process serves keep
// draining between bursts; with nothing due it sleeps a millisecond rather than spin, since the
// service under test needs the other core. The bound is on time, not on a count of events: after the
// process was descheduled (two cores, several processes) the next turns make up what fell due, so
// what it offers is what its core allowed, not what the scheduler's gaps left.
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { ChurnStep, PodChurn } from './pod-churn.js';

export interface ChurnLoopOutcome {
  emitted: number;
  byKind: Record<string, number>;
  windowSeconds: number;
  /** Why the stream stopped early (a pool of the churn ran dry); undefined when it ran its time. */
  error?: string;
}

const TURN_MS = 10;

export async function runChurnLoop(
  churn: PodChurn,
  options: { rate: number; seconds: number; onStep?: (step: ChurnStep) => void; onTurn?: () => void },
): Promise<ChurnLoopOutcome> {
  const byKind: Record<string, number> = {};
  let emitted = 0;
  const windowMs = options.seconds * 1000;
  const started = performance.now();
  const outcome = (error?: string): ChurnLoopOutcome => ({ emitted, byKind, windowSeconds: (performance.now() - started) / 1000, ...(error === undefined ? {} : { error }) });
  for (;;) {
    const turnStart = performance.now();
    const elapsed = turnStart - started;
    if (elapsed >= windowMs) return outcome();
    const due = Math.floor((options.rate * elapsed) / 1000);
    const idle = emitted >= due;
    while (emitted < due) {
      const step = churn.step();
      if (step === undefined) return outcome(`The pod stream ran dry at ${emitted} events: pools ${JSON.stringify(churn.pools())}`);
      emitted += 1;
      byKind[step.kind] = (byKind[step.kind] ?? 0) + 1;
      options.onStep?.(step);
      if (emitted % 16 === 0 && performance.now() - turnStart >= TURN_MS) break;
    }
    options.onTurn?.();
    if (idle) await sleep(1);
    else await yieldToLoop();
  }
}
