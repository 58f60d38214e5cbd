// The checks behind /livez. Each fails only when this process cannot do its work and a restart is the
// cure: an event loop held up for seconds, a loop that died or stopped ticking, a writer that writes
// nothing while changes wait. A source that fails (a cluster down, an exporter refusing) is readiness'
// business, never liveness': restarting would not bring it back. Bounds are measured on a monotonic
// clock, so a wall-clock step never fails a probe. Every bound here is well above what a healthy
// service shows; how many failed probes restart the pod is the probe's failureThreshold.
import type { LivenessCheck } from './admin-app.js';
import { ProgressWatch } from './progress-watch.js';

/**
 * A turn of the event loop longer than this is no slow request: the process is starved or stuck.
 * Twice the longest turn a healthy service showed (a cluster's first LIST of 100,000 pods, mapped in
 * one go: 3.6 s on a development machine, docs/image.md), so a large cluster's sync fails nothing.
 */
export const EVENT_LOOP_LIMIT_MS = 10_000;
/** As long as the chart's liveness probe period, so a stall is seen by at least one probe. */
export const EVENT_LOOP_WINDOW_MS = 10_000;
/** The sampler starts a tick every interval however long scrapes take: three missed is no hiccup. */
export const SAMPLER_INTERVALS = 3;
/**
 * A write step takes tens of ms and the writer retries every flush interval: nothing written for
 * 30 s (150 attempts at the default 200 ms), or 10 intervals when they are longer, is a writer that
 * is stuck or keeps failing (a full disk, a broken file).
 */
export const WRITER_MIN_MS = 30_000;
export const WRITER_INTERVALS = 10;

const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

export function eventLoopCheck(lag: { worstMs(): number; readonly windowMs: number }, limitMs = EVENT_LOOP_LIMIT_MS): LivenessCheck {
  return {
    name: 'event-loop',
    problem() {
      const worst = lag.worstMs();
      return worst > limitMs
        ? `the event loop was held up for ${worst} ms in the last ${seconds(2 * lag.windowMs)} (limit ${limitMs} ms)`
        : null;
    },
  };
}

export interface SamplerLoop {
  loopStatus(): { ticks: number; stopped: boolean; ended: string | null };
}

/** Fails when the scrape loop crashed, or started no tick for SAMPLER_INTERVALS intervals. */
export function samplerCheck(sampler: SamplerLoop, options: { intervalMs: number; now: () => number }): LivenessCheck {
  const limitMs = SAMPLER_INTERVALS * options.intervalMs;
  const watch = new ProgressWatch(options.now);
  watch.stillFor('ticks', sampler.loopStatus().ticks); // timed from the start, not from the first probe
  return {
    name: 'sampler',
    problem() {
      const { ticks, stopped, ended } = sampler.loopStatus();
      if (ended !== null) return `the scrape loop ended: ${ended}`;
      const still = watch.stillFor('ticks', ticks);
      if (stopped) return null; // stopped on purpose, during shutdown
      return still > limitMs
        ? `no scrape tick for ${seconds(still)} (limit ${seconds(limitMs)}: ${SAMPLER_INTERVALS} scrape intervals)`
        : null;
    },
  };
}

export interface WriterProgress {
  clusterId: string;
  pending: number;
  progress: number;
}

/** Fails for a cluster whose changes wait while its write count stands still for longer than the limit. */
export function indexWriterCheck(
  writers: () => readonly WriterProgress[],
  options: { flushIntervalMs: number; now: () => number },
): LivenessCheck {
  const limitMs = Math.max(WRITER_MIN_MS, WRITER_INTERVALS * options.flushIntervalMs);
  const watch = new ProgressWatch(options.now);
  return {
    name: 'index-writer',
    problem() {
      const current = writers();
      watch.retain(new Set(current.map((writer) => writer.clusterId)));
      const stuck = current.flatMap((writer) => {
        const still = watch.stillFor(writer.clusterId, writer.progress);
        return writer.pending > 0 && still > limitMs
          ? [`cluster ${writer.clusterId}: ${writer.pending} changes waiting, nothing written for ${seconds(still)}`]
          : [];
      });
      return stuck.length === 0 ? null : `${stuck.join('; ')} (limit ${seconds(limitMs)})`;
    },
  };
}

/** Fails while an informer loop that should run has ended (nothing restarts it: only a new process). */
export function informersCheck(deadLoops: () => readonly { where: string; message: string }[]): LivenessCheck {
  return {
    name: 'informers',
    problem() {
      const dead = deadLoops();
      return dead.length === 0 ? null : dead.map((loop) => `${loop.where}: the informer loop ended: ${loop.message}`).join('; ');
    },
  };
}
