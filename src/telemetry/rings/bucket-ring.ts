// One tier of a GPU's bucketed history: `slots` buckets of `width` seconds, each with per metric the
// count and sum (packed in one 32-bit tally), min, max and last of its samples. Slots are found by
// absolute bucket number (time / width), so a gap simply leaves old slots behind, recognisable by
// their number.
//
// A bucket holds one owner's samples: when its GPU passes to another workload mid-bucket, the bucket
// restarts for the new owner (the old owner's partial bucket is lost; its raw samples and lifetime
// totals keep it). A bucket is *whole* while it holds every sample its GPU recorded in that interval:
// it never restarted and never refused a value for a full count. Readers of a finer resolution use a
// whole bucket in place of the samples it sums (the raw hour reads whole minutes).
import type { GpuFold } from '../summaries/gpu-fold.js';
import type { HourRing } from './hour-ring.js';
import { METRIC_COUNT, MISSING } from './metric-codec.js';
import { VALUE_BITS, type PercentileHistograms } from '../summaries/percentile-histogram.js';
import type { ArraySize, Carver } from './ring-carver.js';

export interface TierLayout {
  widthSeconds: number;
  slots: number;
}

// Count and sum share a 32-bit tally: count in the top 8 bits, sum below. The interval floor of 2 s
// puts at most 150 samples in a 5-minute bucket; a count that would pass 255 stops taking samples
// rather than wrap, and 255 values of at most 65,534 sum to under 2^24.
const COUNT_SHIFT = 24;
const COUNT_UNIT = 1 << COUNT_SHIFT;
const SUM_MASK = COUNT_UNIT - 1;
const MAX_BUCKET_COUNT = 0xff;

const HOUR_SECONDS = 3600;

// Bucket numbers of the newest bucket holding each slot's latest, for the full scan (which reads
// slots out of time order); reused like the fold.
const SCAN_LATEST_BUCKET = new Float64Array(METRIC_COUNT);

export function bucketRingSizes(slots: number): ArraySize[] {
  const cells = slots * METRIC_COUNT;
  return [[2 * slots, 4], [cells, 4], [3 * cells, 2], [slots, 1]];
}

// Few arrays, each slot's fields side by side: a slot's number and owner share a cache line, and so
// do a cell's min, max and last; each typed array is also an object on the V8 heap (~100 B per GPU).
export class BucketRing {
  readonly width: number;
  readonly slots: number;
  /** Per slot: [2 s] bucket number (time / width) + 1, 0 when never written; [2 s + 1] owner. */
  readonly #stamps: Uint32Array;
  /** count << 24 | sum, per cell (slot × METRIC_COUNT + metric). */
  readonly #tally: Uint32Array;
  /** Per cell: [3 c] min, [3 c + 1] max, [3 c + 2] last. */
  readonly #spread: Uint16Array;
  /** 1 while the slot's bucket is whole (see above). */
  readonly #whole: Uint8Array;

  constructor(carver: Carver, layout: TierLayout) {
    this.width = layout.widthSeconds;
    this.slots = layout.slots;
    const cells = layout.slots * METRIC_COUNT;
    this.#stamps = carver.u32(2 * layout.slots);
    this.#tally = carver.u32(cells);
    this.#spread = carver.u16(3 * cells);
    this.#whole = carver.u8(layout.slots);
  }

  /** Adds a sample; false when the bucket did not take all of it (it restarted, or refused a value). */
  add(time: number, owner: number, stored: ArrayLike<number>): boolean {
    const number = Math.floor(time / this.width) + 1;
    const slot = number % this.slots;
    const stamps = this.#stamps;
    const held = stamps[2 * slot] as number;
    if (held > number) return false; // a sample older than what the slot already holds
    const base = slot * METRIC_COUNT;
    const tally = this.#tally;
    if (held !== number || stamps[2 * slot + 1] !== owner) {
      this.#whole[slot] = held === number ? 0 : 1;
      stamps[2 * slot] = number;
      stamps[2 * slot + 1] = owner;
      tally.fill(0, base, base + METRIC_COUNT);
    }
    const spread = this.#spread;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = stored[m] ?? MISSING;
      if (value === MISSING) continue;
      const cell = base + m;
      const before = tally[cell] as number;
      const count = before >>> COUNT_SHIFT;
      if (count === MAX_BUCKET_COUNT) {
        this.#whole[slot] = 0;
        continue;
      }
      const at = 3 * cell;
      if (count === 0 || value < (spread[at] as number)) spread[at] = value;
      if (count === 0 || value > (spread[at + 1] as number)) spread[at + 1] = value;
      spread[at + 2] = value;
      tally[cell] = before + COUNT_UNIT + value;
    }
    return this.#whole[slot] === 1;
  }

  /** The slot of bucket `number` (time / width) when it still holds it whole, else -1. */
  wholeSlot(number: number): number {
    const slot = (number + 1) % this.slots;
    return this.#stamps[2 * slot] === number + 1 && this.#whole[slot] === 1 ? slot : -1;
  }

  ownerOf(slot: number): number {
    return this.#stamps[2 * slot + 1] as number;
  }

  /** Folds one slot's bucket (newer than anything folded before it). */
  foldSlot(slot: number, fold: GpuFold): void {
    const tally = this.#tally;
    const spread = this.#spread;
    const { sums, counts, mins, maxs, latest } = fold;
    const base = slot * METRIC_COUNT;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const cell = base + m;
      const t = tally[cell] as number;
      if (t === 0) continue;
      sums[m] += t & SUM_MASK;
      counts[m] += t >>> COUNT_SHIFT;
      const at = 3 * cell;
      const low = spread[at] as number;
      const high = spread[at + 1] as number;
      if (low < (mins[m] as number)) mins[m] = low;
      if (high > (maxs[m] as number)) maxs[m] = high;
      if (latest[m] === MISSING) latest[m] = spread[at + 2] as number;
    }
  }

  /**
   * Folds `owner`'s buckets that start inside [from, to], newest first. An hour of the window comes
   * from `hours` when it starts inside the window, no bucket of it can lie past `to`, `hours` holds it
   * pure and this ring still holds every bucket of it (so both answer the same); `newestTime` is the
   * GPU's newest sample. Windows wider than twice the ring are read by a scan of every slot instead.
   */
  collect(window: { owner: number; from: number; to: number }, hours: HourRing | null, newestTime: number, fold: GpuFold): void {
    const { owner, from, to } = window;
    const { width, slots } = this;
    const stamps = this.#stamps;
    const first = Math.ceil(from / width);
    const newest = Math.floor(newestTime / width);
    const lastNumber = Math.floor(to / width);
    if (first > lastNumber) return;
    if (lastNumber - first >= 2 * slots) {
      this.#scan(window, fold);
      return;
    }
    const perHour = hours !== null && HOUR_SECONDS % width === 0 ? HOUR_SECONDS / width : 0;
    // A bucket at or before newest − slots may have been overwritten: its hour is read bucket by bucket.
    const oldestIntact = newest - slots + 1;
    // No slot holds a bucket newer than the GPU's newest sample.
    let number = Math.min(lastNumber, newest);
    while (number >= first) {
      const hourStart = perHour === 0 ? first : number - (number % perHour);
      const wholeHour = number === hourStart + perHour - 1 || number === newest;
      if (
        perHour > 0 &&
        wholeHour &&
        hourStart >= first &&
        hourStart >= oldestIntact &&
        hours?.fold(hourStart / perHour, owner, fold) === true
      ) {
        number = hourStart - 1;
        continue;
      }
      const stop = Math.max(hourStart, first);
      for (; number >= stop; number -= 1) {
        const slot = (number + 1) % slots;
        if (stamps[2 * slot] === number + 1 && stamps[2 * slot + 1] === owner) this.foldSlot(slot, fold);
      }
    }
  }

  /**
   * Counts `owner`'s buckets that start inside [from, to] into `histograms`, per metric slot, each
   * as its mean rounded to a stored unit, weighted by its sample count: the buckets collect() reads
   * (the pure hours it reads instead sum exactly these). The mean of values in [min, max] rounds to an
   * integer in [min, max] too, so each of a bucket's samples is off by at most max − min.
   */
  countMeans(window: { owner: number; from: number; to: number }, newestTime: number, histograms: PercentileHistograms): void {
    const { width, slots } = this;
    const first = Math.ceil(window.from / width);
    // No slot holds a bucket newer than the GPU's newest sample.
    const last = Math.min(Math.floor(window.to / width), Math.floor(newestTime / width));
    if (first > last) return;
    // Hot loop (a 512-GPU day is ~150,000 buckets): plain locals, the counters written in place, and
    // the imported constants copied once (where modules are transpiled, tsx, each read is a getter call).
    const { owner } = window;
    const stamps = this.#stamps;
    const tally = this.#tally;
    const { counts, totals } = histograms;
    const metrics = METRIC_COUNT;
    const bits = VALUE_BITS;
    // A window wider than the ring (job_lifetime) scans every slot by the number it holds; a narrower
    // one walks its bucket numbers, newest first.
    const scan = last - first >= slots;
    const steps = scan ? slots : last - first + 1;
    for (let step = 0; step < steps; step += 1) {
      let slot = step;
      if (scan) {
        const number = (stamps[2 * slot] as number) - 1;
        if (number < first || number > last) continue;
      } else {
        const number = last - step;
        slot = (number + 1) % slots;
        if (stamps[2 * slot] !== number + 1) continue;
      }
      if (stamps[2 * slot + 1] !== owner) continue;
      const base = slot * metrics;
      for (let m = 0; m < metrics; m += 1) {
        const t = tally[base + m] as number;
        if (t === 0) continue;
        const count = t >>> COUNT_SHIFT;
        const at = (m << bits) | Math.round((t & SUM_MASK) / count);
        counts[at] = (counts[at] as number) + count;
        totals[m] = (totals[m] as number) + count;
      }
    }
  }

  /** Every slot whose bucket starts in [from, to]; the latest per metric from the newest such bucket. */
  #scan(window: { owner: number; from: number; to: number }, fold: GpuFold): void {
    const latestBucket = SCAN_LATEST_BUCKET.fill(0);
    const { width } = this;
    const stamps = this.#stamps;
    const tally = this.#tally;
    const spread = this.#spread;
    const first = Math.ceil(window.from / width) + 1;
    const lastNumber = Math.floor(window.to / width) + 1;
    const { sums, counts, mins, maxs, latest } = fold;
    for (let slot = 0; slot < this.slots; slot += 1) {
      const number = stamps[2 * slot] as number;
      if (number < first || number > lastNumber || stamps[2 * slot + 1] !== window.owner) continue;
      const base = slot * METRIC_COUNT;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        const cell = base + m;
        const t = tally[cell] as number;
        if (t === 0) continue;
        sums[m] += t & SUM_MASK;
        counts[m] += t >>> COUNT_SHIFT;
        const at = 3 * cell;
        const low = spread[at] as number;
        const high = spread[at + 1] as number;
        if (low < (mins[m] as number)) mins[m] = low;
        if (high > (maxs[m] as number)) maxs[m] = high;
        if (number > (latestBucket[m] as number)) {
          latestBucket[m] = number;
          latest[m] = spread[at + 2] as number;
        }
      }
    }
  }
}
