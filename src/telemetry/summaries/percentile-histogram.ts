// Nearest-rank percentiles of values in the rings' stored units (16-bit integers, rings/metric-codec.ts),
// by counting: one counter per metric slot and possible stored value. Filling costs one increment per
// value (or per bucket, with its sample count as the weight) and nothing is sorted: a 512-GPU day is
// ~740,000 bucket cells, and sorting them would cost many times what the whole summary does.
//
// The ring walks write `counts` and `totals` themselves, like they write GpuFold's arrays: a method
// call per value cost more than the rest of the walk. The counters take 1.25 MiB, so a read does not
// allocate them: every read shares one set (takeHistograms), as every read shares one GpuFold. Reads
// are synchronous between the fill and the answer, so two never interleave.
import { nearestRank } from '../../domain/percentiles.js';
import { METRIC_COUNT } from '../rings/metric-codec.js';

/** Stored values a slot can hold: its counters are counts[slot << VALUE_BITS | stored]. */
export const VALUE_BITS = 16;
const VALUES = 1 << VALUE_BITS;

export class PercentileHistograms {
  /** [slot << VALUE_BITS | stored]: how many of the slot's values equal `stored`. */
  readonly counts = new Uint32Array(METRIC_COUNT * VALUES);
  /** Values counted per slot (weights summed). */
  readonly totals = new Float64Array(METRIC_COUNT);

  /** `weight` values of `slot` equal to `stored` (an integer in 0..65535). */
  add(slot: number, stored: number, weight: number): void {
    const at = (slot << VALUE_BITS) | stored;
    this.counts[at] = (this.counts[at] as number) + weight;
    this.totals[slot] = (this.totals[slot] as number) + weight;
  }

  /**
   * The stored value of `slot` at each of `percentiles` (ascending), by nearest rank: the smallest
   * value with at least ⌈p × total / 100⌉ values at or below it. Empty when nothing was counted.
   */
  percentiles(slot: number, percentiles: readonly number[]): number[] {
    const total = this.totals[slot] as number;
    if (total === 0) return [];
    const counts = this.counts;
    const base = slot << VALUE_BITS;
    const result: number[] = [];
    let below = 0;
    let value = 0;
    for (const percentile of percentiles) {
      const rank = nearestRank(percentile, total);
      // The walk goes on from where the previous percentile stopped: ranks only grow.
      while (below + (counts[base + value] as number) < rank) {
        below += counts[base + value] as number;
        value += 1;
      }
      result.push(value);
    }
    return result;
  }

  /** Zeroes what was counted: each slot's counters up to its largest value, where its total runs out. */
  clear(): void {
    const counts = this.counts;
    for (let slot = 0; slot < METRIC_COUNT; slot += 1) {
      let left = this.totals[slot] as number;
      const base = slot << VALUE_BITS;
      for (let value = 0; left > 0 && value < VALUES; value += 1) {
        const count = counts[base + value] as number;
        if (count === 0) continue;
        left -= count;
        counts[base + value] = 0;
      }
      this.totals[slot] = 0;
    }
  }
}

let shared: PercentileHistograms | undefined;

/** The histograms every read shares, cleared (allocated on the first read that asks for percentiles). */
export function takeHistograms(): PercentileHistograms {
  shared ??= new PercentileHistograms();
  shared.clear();
  return shared;
}
