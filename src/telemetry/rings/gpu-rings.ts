// One GPU's history at four resolutions: every raw sample for the last hour, 1-minute buckets for
// 6 hours, 5-minute buckets for 24 hours (each bucket: count, sum, min, max, last per metric) and the
// last 24 clock hours. All of it lives in typed arrays over one slot of a slab (ring-slabs.ts), outside
// the V8 heap: at 10,000 GPUs the garbage collector never walks it. The rings have no clock: the caller passes each
// sample's time, and slots are found by their absolute number (time / width).
//
// Each bucket (and raw sample) carries the owner (an interned workload id, 0 = none) of its samples;
// buckets never mix two workloads (bucket-ring.ts). A read is answered at the resolution of its span
// with the same figures it always had: the coarser slots it uses in place of finer ones (whole minutes
// in the raw hour, pure hours in the bucket tiers) hold exactly the samples they stand for.
import { BucketRing, bucketRingSizes, type TierLayout } from './bucket-ring.js';
import { GPU_FOLD } from '../summaries/gpu-fold.js';
import { HourRing, hourRingSizes } from './hour-ring.js';
import type { PercentileHistograms } from '../summaries/percentile-histogram.js';
import { RawRing, rawRingSizes, type RawTotals } from './raw-ring.js';
import { Carver, type ArraySize } from './ring-carver.js';
import type { RingSlot } from './ring-slabs.js';
import type { WindowSummary } from '../summaries/window-summary.js';

export type { TierLayout } from './bucket-ring.js';

/** 1-minute buckets for 6 h, 5-minute buckets for 24 h (DESIGN "Sampler"). */
export const BUCKET_TIERS: readonly TierLayout[] = [
  { widthSeconds: 60, slots: 360 },
  { widthSeconds: 300, slots: 288 },
];

export const RAW_SPAN_SECONDS = 3600;

/** Raw slots for an hour of samples at the scrape interval, plus slack for a tick that runs early. */
export function rawSlotsFor(intervalSeconds: number): number {
  return Math.ceil(RAW_SPAN_SECONDS / intervalSeconds) + 4;
}

export type Resolution = 'raw' | 0 | 1;

function ringSizes(rawSlots: number): ArraySize[] {
  return [...rawRingSizes(rawSlots), ...BUCKET_TIERS.flatMap((t) => bucketRingSizes(t.slots)), ...hourRingSizes()];
}

/** Bytes of one GPU's rings: the slot size of the slabs they are carved from. */
export function gpuRingBytes(rawSlots: number): number {
  return Carver.bytes(ringSizes(rawSlots));
}

export class GpuRings {
  readonly byteLength: number;
  /** Where the rings live; a buffer of their own when no slot was given. */
  readonly slot: RingSlot;
  readonly #raw: RawRing;
  readonly #tiers: BucketRing[];
  readonly #hours: HourRing;

  /**
   * `totals`: running totals the raw ring keeps its counted samples in (see RawRing). `slot`: zeroed
   * memory of gpuRingBytes(rawSlots) bytes at an offset that is a multiple of 8.
   */
  constructor(options: { rawSlots: number; totals?: RawTotals; slot?: RingSlot }) {
    this.byteLength = gpuRingBytes(options.rawSlots);
    this.slot = options.slot ?? { buffer: new ArrayBuffer(this.byteLength), byteOffset: 0 };
    const carver = new Carver(this.slot.buffer, this.slot.byteOffset);
    this.#raw = new RawRing(carver, options.rawSlots, options.totals ?? null);
    this.#tiers = BUCKET_TIERS.map((layout) => new BucketRing(carver, layout));
    this.#hours = new HourRing(carver);
  }

  /** Time (s) of the newest raw sample; -1 when there is none. */
  newestTime(): number {
    return this.#raw.newestTime();
  }

  /**
   * One sample: `stored` holds a stored value (or MISSING) per metric slot. A sample older than the
   * newest one is dropped: raw samples must stay in time order for the window walks.
   */
  record(time: number, owner: number, stored: ArrayLike<number>): boolean {
    if (time < this.#raw.newestTime()) return false;
    this.#raw.add(time, owner, stored);
    let whole = true;
    for (const tier of this.#tiers) whole = tier.add(time, owner, stored) && whole;
    this.#hours.add(time, owner, stored, whole);
    return true;
  }

  /** Adds `owner`'s samples inside [from, to] (seconds) at the given resolution: one GPU's share of a window. */
  collect(resolution: Resolution, window: { owner: number; from: number; to: number }, into: WindowSummary): void {
    const fold = GPU_FOLD.reset();
    if (resolution === 'raw') this.#raw.collect(window, this.#tiers[0] ?? null, fold);
    else this.#tiers[resolution]?.collect(window, this.#hours, this.#raw.newestTime(), fold);
    fold.flushInto(into);
  }

  /**
   * Counts `owner`'s values inside [from, to] into `histograms`, from the samples
   * or buckets collect() reads at that resolution: raw samples one by one, buckets as their means.
   */
  countValues(resolution: Resolution, window: { owner: number; from: number; to: number }, histograms: PercentileHistograms): void {
    if (resolution === 'raw') this.#raw.countValues(window, histograms);
    else this.#tiers[resolution]?.countMeans(window, this.#raw.newestTime(), histograms);
  }

  /** Takes the counted raw samples older than `before` (s) out of the running totals. */
  releaseBefore(before: number): void {
    this.#raw.releaseBefore(before);
  }

  /** Time (s) of the oldest raw sample still in the running totals; Infinity when none is. */
  oldestCountedTime(): number {
    return this.#raw.oldestCountedTime();
  }

  /** Raw samples of one metric slot inside [from, to] by runs of one owner, newest first (rankings). */
  visitRawRuns(
    slot: number,
    window: { from: number; to: number },
    visit: (owner: number, sum: number, count: number, newest: number) => void,
  ): void {
    this.#raw.visitRuns(slot, window.from, window.to, visit);
  }
}
