// One GPU's history at three resolutions: every raw sample for the last hour, 1-minute buckets for
// 6 hours and 5-minute buckets for 24 hours (each bucket: sum, count, min, max, last per metric).
// All of it lives in typed arrays over one ArrayBuffer, outside the V8 heap: at 10,000 GPUs the
// garbage collector never walks it. The rings have no clock: the caller passes each sample's time,
// and bucket slots are found by their absolute bucket number (time / width), so a gap simply leaves
// old slots behind, recognisable by their number.
//
// Each bucket (and raw sample) carries the owner (an interned workload id, 0 = none) of its samples.
// When a GPU passes to another workload mid-bucket, the bucket restarts for the new owner: buckets
// never mix two workloads, at the price of the old owner's last partial bucket (its raw samples and
// lifetime totals keep it).
import { METRIC_COUNT, MISSING } from './metric-codec.js';
import type { WindowSummary } from './window-summary.js';

export interface TierLayout {
  widthSeconds: number;
  slots: number;
}

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

// Per-metric bucket counts are bytes: the interval floor of 2 s puts at most 150 samples in a
// 5-minute bucket; a count that would pass 255 stops taking samples rather than wrap.
const MAX_BUCKET_COUNT = 0xff;

// One GPU's totals while a window is read; reused (reads are synchronous and never nested).
const SCRATCH_SUM = new Float64Array(METRIC_COUNT);
const SCRATCH_COUNT = new Float64Array(METRIC_COUNT);
const SCRATCH_MIN = new Float64Array(METRIC_COUNT);
const SCRATCH_MAX = new Float64Array(METRIC_COUNT);
const SCRATCH_LATEST = new Float64Array(METRIC_COUNT);
const SCRATCH_LATEST_BUCKET = new Float64Array(METRIC_COUNT);

function resetScratch(): { sums: Float64Array; counts: Float64Array; mins: Float64Array; maxs: Float64Array; latest: Float64Array } {
  return {
    sums: SCRATCH_SUM.fill(0),
    counts: SCRATCH_COUNT.fill(0),
    mins: SCRATCH_MIN.fill(MISSING),
    maxs: SCRATCH_MAX.fill(0),
    latest: SCRATCH_LATEST.fill(MISSING),
  };
}

function flushScratch(into: WindowSummary): void {
  for (let m = 0; m < METRIC_COUNT; m += 1) {
    const count = SCRATCH_COUNT[m] as number;
    if (count === 0) continue;
    into.add(m, SCRATCH_SUM[m] as number, count, SCRATCH_MIN[m] as number, SCRATCH_MAX[m] as number);
    into.addLatest(m, SCRATCH_LATEST[m] as number);
  }
}

/** Carves aligned typed arrays out of one buffer, in the order asked. */
class Carver {
  #offset = 0;
  readonly #buffer: ArrayBuffer;
  constructor(buffer: ArrayBuffer) {
    this.#buffer = buffer;
  }
  static bytes(sizes: readonly (readonly [number, number])[]): number {
    let total = 0;
    for (const [length, width] of sizes) total = align(total, width) + length * width;
    return align(total, 8);
  }
  u32(length: number): Uint32Array {
    this.#offset = align(this.#offset, 4);
    const view = new Uint32Array(this.#buffer, this.#offset, length);
    this.#offset += length * 4;
    return view;
  }
  u16(length: number): Uint16Array {
    this.#offset = align(this.#offset, 2);
    const view = new Uint16Array(this.#buffer, this.#offset, length);
    this.#offset += length * 2;
    return view;
  }
  u8(length: number): Uint8Array {
    const view = new Uint8Array(this.#buffer, this.#offset, length);
    this.#offset += length;
    return view;
  }
}

function align(offset: number, width: number): number {
  return Math.ceil(offset / width) * width;
}

function rawSizes(slots: number): [number, number][] {
  return [[slots, 4], [slots, 4], [slots * METRIC_COUNT, 2]];
}

function tierSizes(slots: number): [number, number][] {
  const cells = slots * METRIC_COUNT;
  return [[slots, 4], [slots, 4], [cells, 4], [cells, 2], [cells, 2], [cells, 2], [cells, 1]];
}

class RawRing {
  readonly time: Uint32Array;
  readonly owner: Uint32Array;
  readonly values: Uint16Array;
  readonly slots: number;
  /** Next slot to write. */
  head = 0;
  size = 0;

  constructor(carver: Carver, slots: number) {
    this.slots = slots;
    this.time = carver.u32(slots);
    this.owner = carver.u32(slots);
    this.values = carver.u16(slots * METRIC_COUNT);
  }

  newestTime(): number {
    return this.size === 0 ? -1 : (this.time[(this.head - 1 + this.slots) % this.slots] ?? -1);
  }

  add(time: number, owner: number, stored: ArrayLike<number>): void {
    const slot = this.head;
    this.time[slot] = time;
    this.owner[slot] = owner;
    const base = slot * METRIC_COUNT;
    for (let m = 0; m < METRIC_COUNT; m += 1) this.values[base + m] = stored[m] ?? MISSING;
    this.head = (slot + 1) % this.slots;
    if (this.size < this.slots) this.size += 1;
  }

  /** Samples of `owner` with from ≤ time ≤ to, newest first; the first value met per slot is the GPU's latest. */
  collect(owner: number, from: number, to: number, into: WindowSummary): void {
    // Hot loop (a 512-GPU job reads ~600k values per request): plain locals, one add per metric at the end.
    const { sums, counts, mins, maxs, latest } = resetScratch();
    const { time: times, owner: owners, values, slots } = this;
    let slot = this.head;
    for (let n = 0; n < this.size; n += 1) {
      slot = slot === 0 ? slots - 1 : slot - 1;
      const time = times[slot] as number;
      if (time < from) break;
      if (time > to || owners[slot] !== owner) continue;
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
    flushScratch(into);
  }

  /**
   * One metric slot's samples inside [from, to], newest first, folded into runs of the same owner:
   * `visit(owner, sum, count, newest)` once per run. A GPU almost always has one owner per hour, so a
   * ranking over every GPU makes one call per GPU instead of one per sample.
   */
  visitRuns(slot: number, from: number, to: number, visit: (owner: number, sum: number, count: number, newest: number) => void): void {
    const { time: times, owner: owners, values, slots } = this;
    let runOwner = -1;
    let sum = 0;
    let count = 0;
    let newest = 0;
    let i = this.head;
    for (let n = 0; n < this.size; n += 1) {
      i = i === 0 ? slots - 1 : i - 1;
      const time = times[i] as number;
      if (time < from) break;
      if (time > to) continue;
      const value = values[i * METRIC_COUNT + slot] as number;
      if (value === MISSING) continue;
      const owner = owners[i] as number;
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

class BucketRing {
  readonly width: number;
  readonly slots: number;
  /** Bucket number (time / width) + 1 of each slot; 0: never written. */
  readonly bucket: Uint32Array;
  readonly owner: Uint32Array;
  readonly sum: Uint32Array;
  readonly min: Uint16Array;
  readonly max: Uint16Array;
  readonly last: Uint16Array;
  readonly count: Uint8Array;

  constructor(carver: Carver, layout: TierLayout) {
    this.width = layout.widthSeconds;
    this.slots = layout.slots;
    const cells = layout.slots * METRIC_COUNT;
    this.bucket = carver.u32(layout.slots);
    this.owner = carver.u32(layout.slots);
    this.sum = carver.u32(cells);
    this.min = carver.u16(cells);
    this.max = carver.u16(cells);
    this.last = carver.u16(cells);
    this.count = carver.u8(cells);
  }

  add(time: number, owner: number, stored: ArrayLike<number>): void {
    const number = Math.floor(time / this.width) + 1;
    const slot = number % this.slots;
    const held = this.bucket[slot] ?? 0;
    if (held > number) return; // a sample older than what the slot already holds
    const base = slot * METRIC_COUNT;
    if (held !== number || this.owner[slot] !== owner) {
      this.bucket[slot] = number;
      this.owner[slot] = owner;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        this.count[base + m] = 0;
        this.sum[base + m] = 0;
      }
    }
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = stored[m] ?? MISSING;
      if (value === MISSING) continue;
      const cell = base + m;
      const count = this.count[cell] ?? 0;
      if (count === MAX_BUCKET_COUNT) continue;
      if (count === 0) {
        this.min[cell] = value;
        this.max[cell] = value;
      } else {
        if (value < (this.min[cell] ?? value)) this.min[cell] = value;
        if (value > (this.max[cell] ?? value)) this.max[cell] = value;
      }
      this.sum[cell] = (this.sum[cell] ?? 0) + value;
      this.last[cell] = value;
      this.count[cell] = count + 1;
    }
  }

  /** Buckets of `owner` that start inside [from, to]; the latest per slot comes from the newest such bucket. */
  collect(owner: number, from: number, to: number, into: WindowSummary): void {
    const { sums, counts, mins, maxs, latest } = resetScratch();
    const latestBucket = SCRATCH_LATEST_BUCKET.fill(0);
    const { bucket: buckets, owner: owners, width, count, sum, min, max, last } = this;
    // Bucket numbers are stored + 1; a slot is in the window when its start lies in [from, to].
    const first = Math.ceil(from / width) + 1;
    const lastNumber = Math.floor(to / width) + 1;
    for (let slot = 0; slot < this.slots; slot += 1) {
      const number = buckets[slot] as number;
      if (number < first || number > lastNumber || owners[slot] !== owner) continue;
      const base = slot * METRIC_COUNT;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        const cell = base + m;
        const c = count[cell] as number;
        if (c === 0) continue;
        sums[m] += sum[cell] as number;
        counts[m] += c;
        const low = min[cell] as number;
        const high = max[cell] as number;
        if (low < (mins[m] as number)) mins[m] = low;
        if (high > (maxs[m] as number)) maxs[m] = high;
        if (number > (latestBucket[m] as number)) {
          latestBucket[m] = number;
          latest[m] = last[cell] as number;
        }
      }
    }
    flushScratch(into);
  }
}

export type Resolution = 'raw' | 0 | 1;

export class GpuRings {
  readonly byteLength: number;
  readonly #raw: RawRing;
  readonly #tiers: BucketRing[];

  constructor(options: { rawSlots: number; tiers?: readonly TierLayout[] }) {
    const tiers = options.tiers ?? BUCKET_TIERS;
    this.byteLength = Carver.bytes([...rawSizes(options.rawSlots), ...tiers.flatMap((t) => tierSizes(t.slots))]);
    const carver = new Carver(new ArrayBuffer(this.byteLength));
    this.#raw = new RawRing(carver, options.rawSlots);
    this.#tiers = tiers.map((layout) => new BucketRing(carver, layout));
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
    for (const tier of this.#tiers) tier.add(time, owner, stored);
    return true;
  }

  /** Adds `owner`'s samples inside [from, to] (seconds) at the given resolution. */
  collect(resolution: Resolution, window: { owner: number; from: number; to: number }, into: WindowSummary): void {
    const ring = resolution === 'raw' ? this.#raw : this.#tiers[resolution];
    ring?.collect(window.owner, window.from, window.to, into);
  }

  /** Raw samples of one metric slot inside [from, to] by runs of one owner, newest first (rankings). */
  visitRawRuns(slot: number, window: { from: number; to: number }, visit: (owner: number, sum: number, count: number, newest: number) => void): void {
    this.#raw.visitRuns(slot, window.from, window.to, visit);
  }
}
