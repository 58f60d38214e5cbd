// Per-workload totals over the workload's whole life (`job_lifetime`). Samples add up in memory and
// are written to the repository every flush and at shutdown; a workload touched again after a
// restart starts from what was saved. A workload idle for `idleMs` is dropped from memory after its
// last flush: finished workloads are then read back from the repository.
//
// Usage figures (usage-tally.ts) go the other way: each save sends what the workload's GPUs did since
// the previous one, which the repository adds. A GPU's minute still open when the process stops is
// never judged: at most one minute of idle time per GPU is lost.
import type { Clock } from '../../domain/clock.js';
import { emptyUsage, isEmptyUsage, type GpuUsage } from '../../domain/gpu-usage.js';
import { METRIC_NAMES, type MetricName, type MetricSummary } from '../../domain/metrics.js';
import type { LifetimeRepository, LifetimeSave, LifetimeTotals } from '../../domain/telemetry.js';
import { METRIC_COUNT } from '../rings/metric-codec.js';
import { roundAverage } from '../summaries/round-average.js';
import { addSampleUsage, IdleMinutes, type IdleMinute, type IdleMinuteListener, type SampleFacts } from './usage-tally.js';

class Accumulator {
  readonly sum = new Float64Array(METRIC_COUNT);
  readonly count = new Float64Array(METRIC_COUNT);
  readonly min = new Float64Array(METRIC_COUNT).fill(Infinity);
  readonly max = new Float64Array(METRIC_COUNT).fill(-Infinity);
  /** Current values saved before this process, used until a GPU reports again. */
  readonly savedCurrent: (number | null)[] = new Array<number | null>(METRIC_COUNT).fill(null);
  readonly latestByGpu = new Map<string, Float64Array>();
  /** What the GPUs did since the last save. */
  usage: GpuUsage = emptyUsage();
  lastSampleAt = 0;
  dirty = false;

  constructor(saved: LifetimeTotals | undefined) {
    if (saved === undefined) return;
    METRIC_NAMES.forEach((name, slot) => {
      const totals = saved[name];
      if (totals === undefined || totals.count <= 0) return;
      this.sum[slot] = totals.sum;
      this.count[slot] = totals.count;
      this.min[slot] = totals.min;
      this.max[slot] = totals.max;
      this.savedCurrent[slot] = totals.current;
    });
  }

  add(gpuKey: string, values: Float64Array, at: number): void {
    let latest = this.latestByGpu.get(gpuKey);
    if (latest === undefined) this.latestByGpu.set(gpuKey, (latest = new Float64Array(METRIC_COUNT).fill(NaN)));
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = values[m] ?? NaN;
      if (Number.isNaN(value)) continue;
      this.sum[m] = (this.sum[m] ?? 0) + value;
      this.count[m] = (this.count[m] ?? 0) + 1;
      if (value < (this.min[m] ?? Infinity)) this.min[m] = value;
      if (value > (this.max[m] ?? -Infinity)) this.max[m] = value;
      latest[m] = value;
    }
    this.lastSampleAt = at;
    this.dirty = true;
  }

  current(slot: number): number | null {
    let sum = 0;
    let gpus = 0;
    for (const latest of this.latestByGpu.values()) {
      const value = latest[slot] ?? NaN;
      if (Number.isNaN(value)) continue;
      sum += value;
      gpus += 1;
    }
    return gpus === 0 ? (this.savedCurrent[slot] ?? null) : roundAverage(sum / gpus);
  }

  totals(): LifetimeTotals {
    const totals: LifetimeTotals = {};
    METRIC_NAMES.forEach((name, slot) => {
      const count = this.count[slot] ?? 0;
      if (count === 0) return;
      totals[name] = { count, sum: this.sum[slot] ?? 0, min: this.min[slot] ?? 0, max: this.max[slot] ?? 0, current: this.current(slot) };
    });
    return totals;
  }
}

export function summarizeTotals(totals: LifetimeTotals | undefined, metrics: readonly MetricName[]): Record<MetricName, MetricSummary> {
  const result = {} as Record<MetricName, MetricSummary>;
  for (const name of metrics) {
    const t = totals?.[name];
    result[name] =
      t === undefined || t.count <= 0
        ? { avg: null, min: null, max: null, current: null }
        : { avg: roundAverage(t.sum / t.count), min: t.min, max: t.max, current: t.current };
  }
  return result;
}

export interface LifetimeAccumulatorsOptions {
  clock: Clock;
  /** A workload without samples for this long is let go after its next flush. */
  idleMs: number;
  /** Seconds one sample stands for in the usage figures: scrape_interval_seconds. */
  intervalSeconds: number;
  /** idle_threshold_percent. */
  idleThresholdPercent: number;
  onIdleMinute?: IdleMinuteListener;
}

/** One sample's time (epoch ms, the tick's) and what it says besides its values. */
export interface LifetimeSample extends SampleFacts {
  at: number;
}

export class LifetimeAccumulators {
  readonly #repository: LifetimeRepository;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #intervalSeconds: number;
  readonly #live = new Map<string, Accumulator>();
  /** Each GPU's open minute, tagged with the accumulator its idle seconds go to. */
  readonly #minutes: IdleMinutes<Accumulator>;
  readonly #listener: IdleMinuteListener | undefined;
  readonly #onIdle = (minute: IdleMinute<Accumulator>): void => {
    minute.tag.usage.idleSeconds += minute.idleSeconds;
    minute.tag.dirty = true;
    this.#listener?.({ workloadId: minute.workloadId, end: minute.end, idleSeconds: minute.idleSeconds });
  };

  constructor(repository: LifetimeRepository, options: LifetimeAccumulatorsOptions) {
    this.#repository = repository;
    this.#clock = options.clock;
    this.#idleMs = options.idleMs;
    this.#intervalSeconds = options.intervalSeconds;
    this.#listener = options.onIdleMinute;
    this.#minutes = new IdleMinutes({ intervalSeconds: options.intervalSeconds, idleThresholdPercent: options.idleThresholdPercent });
  }

  /** One GPU's sample (reported units, NaN: missing) for a workload. */
  add(workloadId: string, gpuKey: string, values: Float64Array, sample: LifetimeSample): void {
    let accumulator = this.#live.get(workloadId);
    if (accumulator === undefined) {
      accumulator = new Accumulator(this.#repository.loadLifetime(workloadId));
      this.#live.set(workloadId, accumulator);
    }
    accumulator.add(gpuKey, values, this.#clock.now());
    addSampleUsage(accumulator.usage, values, sample, this.#intervalSeconds);
    this.#minutes.add({ workloadId, gpuKey, at: sample.at, values, tag: accumulator }, this.#onIdle);
  }

  /** The workload's totals: unsaved samples included. */
  totals(workloadId: string): LifetimeTotals | undefined {
    return this.#live.get(workloadId)?.totals() ?? this.#repository.loadLifetime(workloadId);
  }

  /**
   * Judges the GPU minutes that have ended, writes every changed workload's totals with its usage
   * since the last write, then lets go of idle workloads. Returns how many were written. A save that
   * throws leaves everything to go again with the next flush.
   */
  flush(): number {
    const now = this.#clock.now();
    this.#minutes.closeEnded(now, this.#onIdle);
    const entries: LifetimeSave[] = [];
    const dirty: Accumulator[] = [];
    for (const [workloadId, accumulator] of this.#live) {
      if (!accumulator.dirty) continue;
      const usage = accumulator.usage;
      entries.push(
        isEmptyUsage(usage)
          ? { workloadId, totals: accumulator.totals() }
          : { workloadId, totals: accumulator.totals(), usage: { ...usage } },
      );
      dirty.push(accumulator);
    }
    if (entries.length > 0) this.#repository.saveLifetimes(entries);
    for (const accumulator of dirty) {
      accumulator.dirty = false;
      accumulator.usage = emptyUsage();
    }
    const idleBefore = now - this.#idleMs;
    for (const [workloadId, accumulator] of this.#live) {
      // A workload with a minute still open keeps its accumulator: the minute's idle seconds go to it.
      if (!accumulator.dirty && accumulator.lastSampleAt < idleBefore && !this.#minutes.hasOpen(workloadId)) this.#live.delete(workloadId);
    }
    return entries.length;
  }

  get size(): number {
    return this.#live.size;
  }
}
