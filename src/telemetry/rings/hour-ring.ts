// A GPU's last 24 clock hours, one slot each, so a 24-hour read adds ~24 hours and the buckets of the
// partial hour it starts in, instead of 288 five-minute buckets (a 6-hour read: ~6 hours and up to 59
// minutes instead of 360 minutes). The current hour counts as whole when the window reaches the
// GPU's newest sample: none of its buckets can lie past the window.
//
// An hour slot only answers for an hour that is *pure*: every sample its GPU recorded in the hour had
// one owner, and both bucket tiers took every one of them whole. Such an hour sums exactly the
// minutes and the five-minute buckets it spans, so a read gives the same avg/min/max/current as it
// would bucket by bucket. An hour that saw a workload switch (or an idle spell: owner 0), or a bucket
// refusing a value, is left to the buckets: it keeps only its number and stops adding.
import type { GpuFold } from '../summaries/gpu-fold.js';
import { METRIC_COUNT, MISSING } from './metric-codec.js';
import type { ArraySize, Carver } from './ring-carver.js';

const HOUR_SECONDS = 3600;
export const HOUR_SLOTS = 24;

export function hourRingSizes(): ArraySize[] {
  const cells = HOUR_SLOTS * METRIC_COUNT;
  return [[2 * HOUR_SLOTS, 4], [cells, 4], [4 * cells, 2], [HOUR_SLOTS, 1]];
}

export class HourRing {
  /** Per slot: [2 s] hour number (time / 3600) + 1, 0 when never written; [2 s + 1] owner. */
  readonly #stamps: Uint32Array;
  // A pure hour counts at most 60 minutes × 255 values per metric: its sum stays under 2^30.
  readonly #sum: Uint32Array;
  /** Per cell (slot × METRIC_COUNT + metric): [4 c] count, [4 c + 1] min, [4 c + 2] max, [4 c + 3] last. */
  readonly #spread: Uint16Array;
  readonly #pure: Uint8Array;

  constructor(carver: Carver) {
    const cells = HOUR_SLOTS * METRIC_COUNT;
    this.#stamps = carver.u32(2 * HOUR_SLOTS);
    this.#sum = carver.u32(cells);
    this.#spread = carver.u16(4 * cells);
    this.#pure = carver.u8(HOUR_SLOTS);
  }

  /** A sample every bucket tier also recorded; `whole`: whether they all took it whole. */
  add(time: number, owner: number, stored: ArrayLike<number>, whole: boolean): void {
    const number = Math.floor(time / HOUR_SECONDS) + 1;
    const slot = number % HOUR_SLOTS;
    const stamps = this.#stamps;
    const held = stamps[2 * slot] as number;
    if (held > number) return;
    const base = slot * METRIC_COUNT;
    const spread = this.#spread;
    if (held !== number) {
      stamps[2 * slot] = number;
      stamps[2 * slot + 1] = owner;
      this.#pure[slot] = 1;
      this.#sum.fill(0, base, base + METRIC_COUNT);
      for (let m = 0; m < METRIC_COUNT; m += 1) spread[4 * (base + m)] = 0;
    }
    if (!whole || stamps[2 * slot + 1] !== owner) this.#pure[slot] = 0;
    if (this.#pure[slot] === 0) return;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = stored[m] ?? MISSING;
      if (value === MISSING) continue;
      const cell = base + m;
      const at = 4 * cell;
      const count = spread[at] as number;
      if (count === 0 || value < (spread[at + 1] as number)) spread[at + 1] = value;
      if (count === 0 || value > (spread[at + 2] as number)) spread[at + 2] = value;
      spread[at] = count + 1;
      spread[at + 3] = value;
      this.#sum[cell] = (this.#sum[cell] as number) + value;
    }
  }

  /**
   * Folds hour `hour` (time / 3600) for `owner` when this ring can answer for it: true when the hour is
   * pure (folded if it is `owner`'s) or was never written; false when it must be read bucket by bucket.
   * The caller makes sure no newer hour can have taken its slot.
   */
  fold(hour: number, owner: number, fold: GpuFold): boolean {
    const slot = (hour + 1) % HOUR_SLOTS;
    const stamps = this.#stamps;
    if (stamps[2 * slot] !== hour + 1) return true;
    if (this.#pure[slot] === 0) return false;
    if (stamps[2 * slot + 1] !== owner) return true;
    const base = slot * METRIC_COUNT;
    const { sums, counts, mins, maxs, latest } = fold;
    const sum = this.#sum;
    const spread = this.#spread;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const at = 4 * (base + m);
      const count = spread[at] as number;
      if (count === 0) continue;
      sums[m] += sum[base + m] as number;
      counts[m] += count;
      const low = spread[at + 1] as number;
      const high = spread[at + 2] as number;
      if (low < (mins[m] as number)) mins[m] = low;
      if (high > (maxs[m] as number)) maxs[m] = high;
      if (latest[m] === MISSING) latest[m] = spread[at + 3] as number;
    }
    return true;
  }
}
