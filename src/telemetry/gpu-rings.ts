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
    let latestFound = 0;
    for (let n = 0, slot = this.head - 1; n < this.size; n += 1, slot -= 1) {
      if (slot < 0) slot += this.slots;
      const time = this.time[slot] ?? 0;
      if (time < from) break;
      if (time > to || this.owner[slot] !== owner) continue;
      const base = slot * METRIC_COUNT;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        const value = this.values[base + m] ?? MISSING;
        if (value === MISSING) continue;
        into.add(m, value, 1, value, value);
        if ((latestFound & (1 << m)) === 0) {
          latestFound |= 1 << m;
          into.addLatest(m, value);
        }
      }
    }
  }

  /**
   * Every owner's samples of one slot with from ≤ time ≤ to: `visit(owner, value, latest)`, newest
   * first, `latest` true for the newest value of that owner on this GPU.
   */
  visitSlot(slot: number, from: number, to: number, visit: (owner: number, value: number, latest: boolean) => void): void {
    let lastOwner = -1;
    let owners: number[] | null = null;
    for (let n = 0, i = this.head - 1; n < this.size; n += 1, i -= 1) {
      if (i < 0) i += this.slots;
      const time = this.time[i] ?? 0;
      if (time < from) break;
      if (time > to) continue;
      const value = this.values[i * METRIC_COUNT + slot] ?? MISSING;
      if (value === MISSING) continue;
      const owner = this.owner[i] ?? 0;
      let latest = false;
      // A GPU almost always has one owner per hour: a tiny list beats a Set.
      if (owner !== lastOwner && !(owners ??= []).includes(owner)) {
        owners.push(owner);
        latest = true;
      }
      lastOwner = owner;
      visit(owner, value, latest);
    }
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
      this.count.fill(0, base, base + METRIC_COUNT);
      this.sum.fill(0, base, base + METRIC_COUNT);
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
    const latestBucket = new Float64Array(METRIC_COUNT);
    const latestValue = new Uint16Array(METRIC_COUNT);
    for (let slot = 0; slot < this.slots; slot += 1) {
      const number = this.bucket[slot] ?? 0;
      if (number === 0 || this.owner[slot] !== owner) continue;
      const start = (number - 1) * this.width;
      if (start < from || start > to) continue;
      const base = slot * METRIC_COUNT;
      for (let m = 0; m < METRIC_COUNT; m += 1) {
        const cell = base + m;
        const count = this.count[cell] ?? 0;
        if (count === 0) continue;
        into.add(m, this.sum[cell] ?? 0, count, this.min[cell] ?? 0, this.max[cell] ?? 0);
        if (number > (latestBucket[m] ?? 0)) {
          latestBucket[m] = number;
          latestValue[m] = this.last[cell] ?? 0;
        }
      }
    }
    for (let m = 0; m < METRIC_COUNT; m += 1) if ((latestBucket[m] ?? 0) > 0) into.addLatest(m, latestValue[m] ?? 0);
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

  /** Raw samples of one metric slot inside [from, to], for rankings over every owner at once. */
  visitRaw(slot: number, window: { from: number; to: number }, visit: (owner: number, value: number, latest: boolean) => void): void {
    this.#raw.visitSlot(slot, window.from, window.to, visit);
  }
}
