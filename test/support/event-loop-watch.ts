// How late a process's event loop ran, and when: for the fault tests' traffic, where a request that
// times out may have waited in the load generator, in the balancer or in a replica. A tick every
// `tickMs` that comes `stallMs` or more late is a stall, kept with its start, so that a failure can
// say which process stood still, when, and for how long.
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopReport {
  delayP99Ms: number;
  delayMaxMs: number;
  /** The longest stalls (at most 5), longest first. */
  stalls: { at: string; ms: number }[];
}

export interface EventLoopWatch {
  report(): EventLoopReport;
  stop(): EventLoopReport;
}

export function watchEventLoop(options: { tickMs?: number; stallMs?: number } = {}): EventLoopWatch {
  const tickMs = options.tickMs ?? 50;
  const stallMs = options.stallMs ?? 500;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const stalls: { at: string; ms: number }[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    const late = now - last - tickMs;
    last = now;
    if (late < stallMs) return;
    stalls.push({ at: new Date(Date.now() - late).toISOString(), ms: Math.round(late) });
    stalls.sort((a, b) => b.ms - a.ms);
    stalls.splice(5);
  }, tickMs);
  ticker.unref();
  const report = (): EventLoopReport => ({
    delayP99Ms: Math.round(delay.percentile(99) / 1e6),
    delayMaxMs: Math.round(delay.max / 1e6),
    stalls: [...stalls],
  });
  return {
    report,
    stop: () => {
      clearInterval(ticker);
      delay.disable();
      return report();
    },
  };
}

/** "none", or each stall as "01:56:05.346 for 612 ms". */
export function describeStalls(report: EventLoopReport): string {
  if (report.stalls.length === 0) return 'none';
  return report.stalls.map((s) => `${s.at.slice(11, 23)} for ${s.ms} ms`).join(', ');
}
