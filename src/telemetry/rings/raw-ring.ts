// A GPU's raw samples of the last hour (plus slack), in time order: time, owner and a stored value
// per metric, in a ring of fixed slots. Its newest samples can also be kept counted in running totals
// (the rankings' last-hour totals): the ring tells the totals of each sample it takes and of each one
// it lets go, by age or by overwriting it.
import type { BucketRing } from './bucket-ring.js';
import type { GpuFold } from '../summaries/gpu-fold.js';
import { METRIC_COUNT, MISSING } from './metric-codec.js';
import { VALUE_BITS, type PercentileHistograms } from '../summaries/percentile-histogram.js';
import type { ArraySize, Carver } from './ring-carver.js';

/** Running totals over a ring's newest samples; `seq` numbers the GPU's samples from 0, in order. */
export interface RawTotals {
  add(owner: number, values: Uint16Array, base: number, seq: number): void;
  remove(owner: number, values: Uint16Array, base: number, seq: number): void;
}

export function rawRingSizes(slots: number): ArraySize[] {
  return [[2 * slots, 4], [slots * METRIC_COUNT, 2]];
}

export class RawRing {
  /** Per slot: [2 s] time (s), [2 s + 1] owner. */
  readonly #stamps: Uint32Array;
  readonly #values: Uint16Array;
  readonly slots: number;
  readonly #totals: RawTotals | null;
  /** Next slot to write. */
  #next = 0;
  #size = 0;
  /** Samples ever added. */
  #added = 0;
  /** The newest `#counted` samples are in the totals. */
  #counted = 0;

  constructor(carver: Carver, slots: number, totals: RawTotals | null) {
    this.slots = slots;
    this.#stamps = carver.u32(2 * slots);
    this.#values = carver.u16(slots * METRIC_COUNT);
    this.#totals = totals;
  }

  newestTime(): number {
    return this.#size === 0 ? -1 : (this.#stamps[2 * ((this.#next - 1 + this.slots) % this.slots)] as number);
  }

  add(time: number, owner: number, stored: ArrayLike<number>): void {
    const slot = this.#next;
    if (this.#size === this.slots && this.#counted === this.#size) this.#release();
    this.#stamps[2 * slot] = time;
    this.#stamps[2 * slot + 1] = owner;
    const base = slot * METRIC_COUNT;
    for (let m = 0; m < METRIC_COUNT; m += 1) this.#values[base + m] = stored[m] ?? MISSING;
    this.#next = (slot + 1) % this.slots;
    if (this.#size < this.slots) this.#size += 1;
    this.#added += 1;
    if (this.#totals === null) return;
    this.#totals.add(owner, this.#values, base, this.#added - 1);
    this.#counted += 1;
  }

  /** Takes out of the totals every counted sample older than `before` (s). */
  releaseBefore(before: number): void {
    while (this.#counted > 0 && this.oldestCountedTime() < before) this.#release();
  }

  oldestCountedTime(): number {
    return this.#counted === 0 ? Infinity : (this.#stamps[2 * ((this.#next - this.#counted + this.slots) % this.slots)] as number);
  }

  /** The oldest counted sample leaves the totals. */
  #release(): void {
    const slot = (this.#next - this.#counted + this.slots) % this.slots;
    this.#totals?.remove(this.#stamps[2 * slot + 1] as number, this.#values, slot * METRIC_COUNT, this.#added - this.#counted);
    this.#counted -= 1;
  }

  /**
   * Folds `owner`'s samples with from ≤ time ≤ to, newest first. A minute starting inside the window
   * with no sample past `to` is folded from `minutes` instead, when that bucket is whole and this ring
   * still holds every sample of the minute: the same values, four times fewer cells at 15 s.
   */
  collect(window: { owner: number; from: number; to: number }, minutes: BucketRing | null, fold: GpuFold): void {
    // Hot loop (a 512-GPU job reads ~120k samples per request): plain locals.
    const { owner, from, to } = window;
    const { sums, counts, mins, maxs, latest } = fold;
    const { slots } = this;
    const stamps = this.#stamps;
    const values = this.#values;
    const width = minutes?.width ?? 0;
    // Every sample of a minute that starts after the oldest one held is still here (all are, before the ring wraps).
    const oldestHeld = this.#size < slots ? -Infinity : (stamps[2 * this.#next] as number);
    // Past the newest sample a minute has nothing more: when the window reaches it, any minute ends inside.
    const minuteEndsInside = to >= this.newestTime();
    // The minute of the samples being read: [minuteStart, minuteStart + width); `skip` when its bucket stood in for them.
    let minuteStart = Infinity;
    let skip = false;
    let slot = this.#next;
    for (let n = 0; n < this.#size; n += 1) {
      slot = slot === 0 ? slots - 1 : slot - 1;
      const time = stamps[2 * slot] as number;
      if (time < from) break;
      if (time > to) continue;
      if (time < minuteStart && minutes !== null) {
        minuteStart = Math.floor(time / width) * width;
        const inside = minuteStart >= from && (minuteEndsInside || minuteStart + width - 1 <= to) && minuteStart > oldestHeld;
        const bucketSlot = inside ? minutes.wholeSlot(minuteStart / width) : -1;
        skip = bucketSlot >= 0;
        if (skip && minutes.ownerOf(bucketSlot) === owner) minutes.foldSlot(bucketSlot, fold);
      }
      if (skip || stamps[2 * slot + 1] !== owner) continue;
      const base = slot * METRIC_COUNT;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        const value = values[base + m] as number;
        if (value === MISSING) continue;
        sums[m] += value;
        counts[m] += 1;
        if (value < (mins[m] as number)) mins[m] = value;
        if (value > (maxs[m] as number)) maxs[m] = value;
        if (latest[m] === MISSING) latest[m] = value;
      }
    }
  }

  /**
   * Counts each value of `owner`'s samples with from ≤ time ≤ to into `histograms`: the samples
   * collect() folds, one by one (a whole minute sums them, a percentile needs each).
   */
  countValues(window: { owner: number; from: number; to: number }, histograms: PercentileHistograms): void {
    // Hot loop (a 512-GPU hour is ~625,000 values): plain locals, the counters written in place, and
    // the imported constants copied once (where modules are transpiled, tsx, each read of an import
    // is a getter call).
    const { owner, from, to } = window;
    const { counts, totals } = histograms;
    const { slots } = this;
    const stamps = this.#stamps;
    const values = this.#values;
    const metrics = METRIC_COUNT;
    const bits = VALUE_BITS;
    const missing = MISSING;
    let slot = this.#next;
    for (let n = 0; n < this.#size; n += 1) {
      slot = slot === 0 ? slots - 1 : slot - 1;
      const time = stamps[2 * slot] as number;
      if (time < from) break;
      if (time > to || stamps[2 * slot + 1] !== owner) continue;
      const base = slot * metrics;
      for (let m = 0; m < metrics; m += 1) {
        const value = values[base + m] as number;
        if (value === missing) continue;
        const at = (m << bits) | value;
        counts[at] = (counts[at] as number) + 1;
        totals[m] = (totals[m] as number) + 1;
      }
    }
  }

  /**
   * One metric slot's samples inside [from, to], newest first, folded into runs of the same owner:
   * `visit(owner, sum, count, newest)` once per run. A GPU almost always has one owner per hour, so a
   * ranking over every GPU makes one call per GPU instead of one per sample.
   */
  visitRuns(slot: number, from: number, to: number, visit: (owner: number, sum: number, count: number, newest: number) => void): void {
    const { slots } = this;
    const stamps = this.#stamps;
    const values = this.#values;
    let runOwner = -1;
    let sum = 0;
    let count = 0;
    let newest = 0;
    let i = this.#next;
    for (let n = 0; n < this.#size; n += 1) {
      i = i === 0 ? slots - 1 : i - 1;
      const time = stamps[2 * i] as number;
      if (time < from) break;
      if (time > to) continue;
      const value = values[i * METRIC_COUNT + slot] as number;
      if (value === MISSING) continue;
      const owner = stamps[2 * i + 1] as number;
      if (owner !== runOwner) {
        if (count > 0) visit(runOwner, sum, count, newest);
        runOwner = owner;
        sum = 0;
        count = 0;
        newest = value;
      }
      sum += value;
      count += 1;
    }
    if (count > 0) visit(runOwner, sum, count, newest);
  }
}
