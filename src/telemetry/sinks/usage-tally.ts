// How GPU samples become a workload's usage figures (src/domain/gpu-usage.ts), on both telemetry paths
// (lifetime.ts on SQLite, bucket-accumulator.ts on PostgreSQL). A sample stands for one scrape
// interval of its GPU. Utilization and power are taken as the rings' stored integers (0.01 %, 0.1 W),
// so every figure is a whole number and sums come out the same in any order.
//
// Idle time is judged per GPU and clock minute rather than per sample: one 0 % sample between busy
// ones is a pause, not idleness. A minute of one GPU of one workload is judged when it closes: when
// that GPU's next sample for the workload falls in a later minute, or when a flush runs at or after
// the minute's end. Its utilization samples then count as idle if their mean is below the threshold.
import type { GpuUsage } from '../../domain/gpu-usage.js';
import { encodeMetric, METRIC_SLOT } from '../rings/metric-codec.js';

export const MINUTE_MS = 60_000;
const UTIL = METRIC_SLOT.gpu_utilization;
const POWER = METRIC_SLOT.power_usage;
/** Stored utilization units (0.01 %) per percent. */
const UTIL_UNITS_PER_PERCENT = 100;

export interface UsageRules {
  /** Seconds one sample stands for: the scrape interval. */
  intervalSeconds: number;
  /** A closed minute whose mean utilization is below this (percent) is idle. */
  idleThresholdPercent: number;
}

export function checkUsageRules(rules: UsageRules): UsageRules {
  const { intervalSeconds, idleThresholdPercent } = rules;
  if (!(Number.isInteger(intervalSeconds) && intervalSeconds > 0)) {
    throw new Error(`Cannot tally GPU usage: the scrape interval must be a positive whole number of seconds, got ${intervalSeconds}`);
  }
  if (!(idleThresholdPercent >= 0 && idleThresholdPercent <= 100)) {
    throw new Error(`Cannot tally GPU usage: the idle threshold must be a percentage from 0 to 100, got ${idleThresholdPercent}`);
  }
  return { intervalSeconds, idleThresholdPercent };
}

/** What one sample says besides its metric values. */
export interface SampleFacts {
  /** A MIG instance: its power reading is the whole GPU's, so it adds no power figures. */
  mig: boolean;
  /** The sample reports an XID error this process had not seen on the GPU (scrape/xid-watch.ts). */
  xidError: boolean;
}

/** Adds one GPU sample's figures (values in reported units, NaN: missing) to `usage`; idle time aside. */
export function addSampleUsage(usage: GpuUsage, values: ArrayLike<number>, facts: SampleFacts, intervalSeconds: number): void {
  const util = values[UTIL] ?? NaN;
  if (!Number.isNaN(util)) {
    usage.utilSeconds += intervalSeconds;
    usage.utilWeighted += encodeMetric(UTIL, util) * intervalSeconds;
  }
  const power = values[POWER] ?? NaN;
  if (!facts.mig && !Number.isNaN(power)) {
    usage.powerSeconds += intervalSeconds;
    usage.energyDj += encodeMetric(POWER, power) * intervalSeconds;
  }
  if (facts.xidError) usage.gpuErrors += 1;
}

interface OpenMinute<Tag> {
  /** Start of the clock minute (epoch ms). */
  start: number;
  /** Σ stored utilization (0.01 %) of its samples. */
  utilSum: number;
  samples: number;
  tag: Tag;
}

/** An idle minute, as it closes. */
export interface IdleMinute<Tag> {
  workloadId: string;
  /** What the caller gave with the minute's newest sample. */
  tag: Tag;
  /** End of the minute (epoch ms), exclusive. */
  end: number;
  idleSeconds: number;
}

export type OnIdleMinute<Tag> = (minute: IdleMinute<Tag>) => void;

/** Told of every idle minute as it is counted into a workload's usage (the fleet's history counts it by node). */
export type IdleMinuteListener = (minute: Omit<IdleMinute<unknown>, 'tag'>) => void;

/**
 * The open minute of each GPU of each workload. Only idle minutes are reported as they close; a
 * minute that closes busy just goes.
 */
export class IdleMinutes<Tag> {
  readonly #rules: UsageRules;
  /** workload → GPU key → its open minute. */
  readonly #open = new Map<string, Map<string, OpenMinute<Tag>>>();
  /**
   * Every minute ending at or before this was closed by a flush (for GPUs without samples in it too):
   * a sample of one such minute comes after it was judged, and stays out of it.
   */
  #closedThrough = -Infinity;

  constructor(rules: UsageRules) {
    this.#rules = checkUsageRules(rules);
  }

  /** One GPU sample (values in reported units) at `at` (ms); closes the GPU's earlier minute. */
  add(sample: { workloadId: string; gpuKey: string; at: number; values: ArrayLike<number>; tag: Tag }, onIdle: OnIdleMinute<Tag>): void {
    const util = sample.values[UTIL] ?? NaN;
    if (Number.isNaN(util)) return;
    const stored = encodeMetric(UTIL, util);
    const start = Math.floor(sample.at / MINUTE_MS) * MINUTE_MS;
    if (start + MINUTE_MS <= this.#closedThrough) return;
    let gpus = this.#open.get(sample.workloadId);
    if (gpus === undefined) this.#open.set(sample.workloadId, (gpus = new Map()));
    const minute = gpus.get(sample.gpuKey);
    if (minute === undefined) {
      // The key may be a slice of the scrape's text, which it would keep alive while the minute is open.
      gpus.set(Buffer.from(sample.gpuKey, 'utf8').toString('utf8'), { start, utilSum: stored, samples: 1, tag: sample.tag });
      return;
    }
    // A sample older than the GPU's open minute belongs to a minute already judged.
    if (start < minute.start) return;
    if (start > minute.start) {
      this.#judge(sample.workloadId, minute, onIdle);
      minute.start = start;
      minute.utilSum = 0;
      minute.samples = 0;
    }
    minute.utilSum += stored;
    minute.samples += 1;
    minute.tag = sample.tag;
  }

  /** Closes every open minute that ended at or before `until` (ms). */
  closeEnded(until: number, onIdle: OnIdleMinute<Tag>): void {
    if (until > this.#closedThrough) this.#closedThrough = until;
    this.#close((minute) => minute.start + MINUTE_MS <= until, onIdle);
  }

  /** Closes every open minute, ended or not (nothing more will come for them). */
  closeAll(onIdle: OnIdleMinute<Tag>): void {
    this.#close(() => true, onIdle);
  }

  /** Whether a minute of the workload is still open. */
  hasOpen(workloadId: string): boolean {
    return this.#open.has(workloadId);
  }

  get openMinutes(): number {
    let open = 0;
    for (const gpus of this.#open.values()) open += gpus.size;
    return open;
  }

  #close(ended: (minute: OpenMinute<Tag>) => boolean, onIdle: OnIdleMinute<Tag>): void {
    for (const [workloadId, gpus] of this.#open) {
      for (const [gpuKey, minute] of gpus) {
        if (!ended(minute)) continue;
        gpus.delete(gpuKey);
        const end = minute.start + MINUTE_MS;
        if (end > this.#closedThrough) this.#closedThrough = end;
        this.#judge(workloadId, minute, onIdle);
      }
      if (gpus.size === 0) this.#open.delete(workloadId);
    }
  }

  #judge(workloadId: string, minute: OpenMinute<Tag>, onIdle: OnIdleMinute<Tag>): void {
    // One division of integers, so a mean that is exactly the threshold compares equal to it, not below.
    const meanPercent = minute.utilSum / (minute.samples * UTIL_UNITS_PER_PERCENT);
    if (minute.samples === 0 || !(meanPercent < this.#rules.idleThresholdPercent)) return;
    onIdle({ workloadId, tag: minute.tag, end: minute.start + MINUTE_MS, idleSeconds: minute.samples * this.#rules.intervalSeconds });
  }
}
