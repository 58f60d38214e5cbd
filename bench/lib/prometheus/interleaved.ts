// Sequential latency of two servers answering the same question, measured in turns: one request to
// the first, then one to the second, each on its own keep-alive connection. On a 2-core machine that
// others share, load comes and goes over seconds; taking turns puts both sides under the same load,
// so their ratio holds even when the absolute figures are noisy. Same figures as sequentialRun
// (bench/lib/measure/load.ts): nearest-rank percentiles, non-2xx and connection errors counted.
import { Agent } from 'node:http';
import { get, summarize, type RunResult, type Target } from '../measure/load.js';

export interface TurnSettings {
  requests: number;
  warmup: number;
  /** Stop after this long, once `minRequests` turns are done. */
  maxSeconds: number;
  minRequests: number;
}

/** Each target's RunResult, in the order given; every turn makes one request to each. */
export async function interleavedRun(targets: readonly Target[], settings: TurnSettings): Promise<RunResult[]> {
  const sides = targets.map((target) => ({ target, base: new URL(target.url), agent: new Agent({ keepAlive: true, maxSockets: 1 }), samples: [] as number[], statusCodes: {} as Record<string, number>, non2xx: 0, errors: 0 }));
  const started = performance.now();
  let turns = 0;
  try {
    for (let i = 0; i < settings.warmup + settings.requests; i += 1) {
      const measured = i >= settings.warmup;
      if (measured && turns >= settings.minRequests && performance.now() - started > settings.maxSeconds * 1000) break;
      for (const side of sides) {
        const path = side.target.paths[i % side.target.paths.length] ?? '/';
        const begin = performance.now();
        try {
          const status = await get(side.agent, { hostname: side.base.hostname, port: side.base.port, path, headers: side.target.headers });
          if (!measured) continue;
          side.samples.push(performance.now() - begin);
          side.statusCodes[String(status)] = (side.statusCodes[String(status)] ?? 0) + 1;
          if (status < 200 || status > 299) side.non2xx += 1;
        } catch {
          side.errors += 1;
        }
      }
      if (measured) turns += 1;
    }
  } finally {
    for (const side of sides) side.agent.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  return sides.map((side) => ({
    ...summarize(side.samples),
    seconds: Math.round(seconds * 100) / 100,
    // Per side, over the whole turn-taking run: the other side's time is in it.
    reqPerSec: Math.round((side.samples.length / seconds) * 10) / 10,
    non2xx: side.non2xx,
    errors: side.errors,
    statusCodes: side.statusCodes,
  }));
}

