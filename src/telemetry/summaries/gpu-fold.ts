// One GPU's totals while a window is read: the rings fold their samples and buckets into it, newest
// first (so the first value met per metric is the GPU's latest), and it goes into the workload's
// WindowSummary once per GPU. A single instance serves every read (reads are synchronous and never
// nested), so a 512-GPU read allocates nothing per GPU.
import { METRIC_COUNT, MISSING } from '../rings/metric-codec.js';
import type { WindowSummary } from './window-summary.js';

export class GpuFold {
  readonly sums = new Float64Array(METRIC_COUNT);
  readonly counts = new Float64Array(METRIC_COUNT);
  readonly mins = new Float64Array(METRIC_COUNT);
  readonly maxs = new Float64Array(METRIC_COUNT);
  /** The GPU's latest stored value per slot: the first one folded, as folds go newest first; MISSING until then. */
  readonly latest = new Float64Array(METRIC_COUNT);

  reset(): this {
    // Once per GPU of a read: a plain loop costs less than five fill() calls.
    const { sums, counts, mins, maxs, latest } = this;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      sums[m] = 0;
      counts[m] = 0;
      mins[m] = MISSING;
      maxs[m] = 0;
      latest[m] = MISSING;
    }
    return this;
  }

  flushInto(into: WindowSummary): void {
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const count = this.counts[m] as number;
      if (count === 0) continue;
      into.add(m, this.sums[m] as number, count, this.mins[m] as number, this.maxs[m] as number);
      into.addLatest(m, this.latest[m] as number);
    }
  }
}

/** The fold every read shares. */
export const GPU_FOLD = new GpuFold();
