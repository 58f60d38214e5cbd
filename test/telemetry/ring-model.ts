// The rings' read semantics written out plainly, sample by sample, for tests that compare the rings
// against it: no tiers, no shortcuts, every sample a GPU recorded kept in a list.
//   raw (windows up to 1 h): the GPU's last `rawSlots` samples with from ≤ time ≤ to.
//   buckets (1 min up to 6 h, 5 min beyond): a bucket holds one owner's samples of its interval and
//   starts over when its GPU changes owner mid-bucket; a window takes the buckets that start inside
//   it, among the newest `slots` bucket numbers each slot (number mod slots) last held.
// avg/min/max over every sample taken; current = mean over GPUs of each GPU's latest (newest bucket's
// last value). Values are stored units; the summary is in reported units, as the API gives it.
import { METRIC_NAMES, type MetricSummary } from '../../src/domain/metrics.js';
import { GpuFleet } from '../../src/telemetry/rings/gpu-fleet.js';
import { decodeMetric, METRIC_COUNT, MISSING } from '../../src/telemetry/rings/metric-codec.js';

interface Sample {
  time: number;
  owner: string | undefined;
  values: number[];
}

const MINUTES = { width: 60, slots: 360, maxSpan: 6 * 3600 };
const FIVE_MINUTES = { width: 300, slots: 288, maxSpan: Infinity };

const round = (value: number) => Math.round(value * 100) / 100;

export class RingModel {
  readonly #rawSlots: number;
  readonly #gpus = new Map<string, Sample[]>();

  constructor(rawSlots: number) {
    this.#rawSlots = rawSlots;
  }

  /** Records a sample unless it is older than its GPU's newest, as the rings do. */
  record(gpu: string, time: number, owner: string | undefined, values: ArrayLike<number>): void {
    let samples = this.#gpus.get(gpu);
    if (samples === undefined) this.#gpus.set(gpu, (samples = []));
    const newest = samples[samples.length - 1];
    if (newest !== undefined && time < newest.time) return;
    samples.push({ time, owner, values: Array.from(values) });
  }

  forget(gpu: string): void {
    this.#gpus.delete(gpu);
  }

  /** Per metric slot, the groups of values a window takes on each GPU, newest group first. */
  #groups(owner: string, from: number, to: number): number[][][][] {
    const perGpu: number[][][][] = [];
    const span = to - from;
    for (const samples of this.#gpus.values()) {
      const groups: number[][][] = []; // [group][slot][values]
      if (span <= 3600) {
        for (const s of samples.slice(-this.#rawSlots).reverse()) {
          if (s.time >= from && s.time <= to && s.owner === owner) groups.push(s.values.map((v) => (v === MISSING ? [] : [v])));
        }
      } else {
        const tier = span <= MINUTES.maxSpan ? MINUTES : FIVE_MINUTES;
        // Each bucket number's content as the ring last knew it, then only the newest number per slot.
        const buckets = new Map<number, { owner: string | undefined; values: number[][] }>();
        for (const s of samples) {
          const number = Math.floor(s.time / tier.width);
          let bucket = buckets.get(number);
          if (bucket === undefined || bucket.owner !== s.owner) buckets.set(number, (bucket = { owner: s.owner, values: s.values.map(() => []) }));
          bucket.values.forEach((list, m) => {
            const v = s.values[m] ?? MISSING;
            if (v !== MISSING && list.length < 255) list.push(v);
          });
        }
        const newestPerSlot = new Map<number, number>();
        for (const number of buckets.keys()) newestPerSlot.set(number % tier.slots, Math.max(newestPerSlot.get(number % tier.slots) ?? -1, number));
        const numbers = [...buckets.keys()].filter((n) => newestPerSlot.get(n % tier.slots) === n).sort((a, b) => b - a);
        for (const number of numbers) {
          const start = number * tier.width;
          const bucket = buckets.get(number);
          if (bucket !== undefined && start >= from && start <= to && bucket.owner === owner) groups.push(bucket.values);
        }
      }
      perGpu.push(groups);
    }
    return perGpu;
  }

  /** The summary of each metric over [from, to] (seconds), as GET /v1/workloads/{id}/metrics reports it. */
  summary(owner: string, from: number, to: number): Record<string, MetricSummary> {
    const perGpu = this.#groups(owner, from, to);
    const result: Record<string, MetricSummary> = {};
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const all: number[] = [];
      const latest: number[] = [];
      for (const groups of perGpu) {
        const taken = groups.map((g) => g[m] ?? []).filter((list) => list.length > 0);
        taken.forEach((list) => all.push(...list));
        const newest = taken[0];
        const last = newest?.[newest.length - 1];
        if (last !== undefined) latest.push(last);
      }
      result[METRIC_NAMES[m] ?? ''] =
        all.length === 0
          ? { avg: null, min: null, max: null, current: null }
          : {
              avg: round(decodeMetric(m, all.reduce((a, b) => a + b, 0) / all.length)),
              min: decodeMetric(m, Math.min(...all)),
              max: decodeMetric(m, Math.max(...all)),
              current: round(decodeMetric(m, latest.reduce((a, b) => a + b, 0) / latest.length)),
            };
    }
    return result;
  }

  /**
   * Per metric slot, the groups a window's values come in: one per raw sample in the last hour, one
   * per bucket beyond (its samples' values). Percentiles are taken from their means weighted by size.
   */
  valueGroups(owner: string, from: number, to: number): number[][][] {
    const perGpu = this.#groups(owner, from, to);
    return Array.from({ length: METRIC_COUNT }, (_, m) => perGpu.flatMap((groups) => groups.map((g) => g[m] ?? []).filter((list) => list.length > 0)));
  }

  /** Every workload with raw samples of metric `slot` in the hour up to `to`: avg and current. */
  rank(slot: number, to: number): Record<string, { avg: number; current: number }> {
    const owners = new Set<string>();
    for (const samples of this.#gpus.values()) for (const s of samples) if (s.owner !== undefined) owners.add(s.owner);
    const result: Record<string, { avg: number; current: number }> = {};
    for (const owner of [...owners].sort()) {
      const summary = this.summary(owner, to - 3600, to)[METRIC_NAMES[slot] ?? ''];
      if (summary?.avg == null || summary.current === null) continue;
      // The ranking rounds the exact mean, like the summary: both come from the same sums.
      result[owner] = { avg: summary.avg, current: summary.current };
    }
    return result;
  }
}

/** A GpuFleet and a RingModel fed the same samples, each GPU on one node of one cluster. */
export function fleetAndModel(rawSlots: number) {
  const fleet = new GpuFleet({ rawSlots });
  const model = new RingModel(rawSlots);
  return {
    fleet,
    model,
    record(key: string, time: number, owner: string | undefined, values: Uint16Array) {
      fleet.record({ key, clusterId: 'c1', hostname: 'node-1', modelName: 'H100' }, { time, stored: values, workloadId: owner });
      model.record(key, time, owner, values);
    },
  };
}
