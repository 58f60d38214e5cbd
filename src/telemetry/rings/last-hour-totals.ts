// Every workload's totals over the raw samples its GPUs hold for the last hour, kept as samples come
// and go, so a ranking reads one entry per workload instead of every GPU's hour (10,000 GPUs × 240
// samples). Each GPU's raw ring tells its GpuShare of each sample it takes and of each one it lets go
// (by age, or by overwriting it); the totals hold exactly the samples a walk of the rings over the
// same window would meet, so both rank alike (integer sums, exact in doubles).
//
// Per workload and metric: the sum and count of its samples, and the sum and count of its GPUs'
// latest values (`current` is their mean); per workload and GPU: the newest value of each metric and
// which sample it came from, so the latest values follow samples ageing out one by one.
import { METRIC_COUNT, MISSING } from './metric-codec.js';
import type { RawTotals } from './raw-ring.js';

// Plain arrays, not typed ones: each typed array would bring an ArrayBuffer of its own (~100 B more
// per GPU link); these hold small integers, or integer-valued doubles.
const zeros = (): number[] => new Array<number>(METRIC_COUNT).fill(0);

/** One workload's samples on every GPU. */
class OwnerTotals {
  readonly sum = zeros();
  readonly count = zeros();
  readonly latestSum = zeros();
  readonly latestCount = zeros();
  /** GPUs with samples of this owner counted. */
  links = 0;
}

/** One workload's samples on one GPU. */
class GpuLink {
  samples = 0;
  /** Newest stored value per metric slot (MISSING: none counted), and its sample's number on the GPU. */
  readonly latest = new Array<number>(METRIC_COUNT).fill(MISSING);
  readonly latestSeq = zeros();
  readonly owner: number;
  readonly totals: OwnerTotals;

  constructor(owner: number, totals: OwnerTotals) {
    this.owner = owner;
    this.totals = totals;
  }
}

export interface OwnerFigures {
  /** Stored units, summed over every sample / over each GPU's latest. */
  sum: number;
  count: number;
  latestSum: number;
  latestCount: number;
}

export class LastHourTotals {
  readonly #owners = new Map<number, OwnerTotals>();

  /** The share of one GPU, to hand to its raw ring. */
  share(): RawTotals {
    return new GpuShare(this.#owners);
  }

  /** Each owner's figures for one metric slot, for owners with at least one sample of it. */
  *figures(slot: number): Generator<[owner: number, figures: OwnerFigures]> {
    const figures: OwnerFigures = { sum: 0, count: 0, latestSum: 0, latestCount: 0 };
    for (const [owner, totals] of this.#owners) {
      const count = totals.count[slot] as number;
      if (count === 0) continue;
      figures.sum = totals.sum[slot] as number;
      figures.count = count;
      figures.latestSum = totals.latestSum[slot] as number;
      figures.latestCount = totals.latestCount[slot] as number;
      yield [owner, figures];
    }
  }

  /** Owners with samples counted (for tests and stats). */
  get owners(): number {
    return this.#owners.size;
  }
}

class GpuShare implements RawTotals {
  readonly #owners: Map<number, OwnerTotals>;
  /** Owners with counted samples on this GPU: one, rarely a few (a GPU changing hands within the hour). */
  readonly #links: GpuLink[] = [];

  constructor(owners: Map<number, OwnerTotals>) {
    this.#owners = owners;
  }

  add(owner: number, values: Uint16Array, base: number, seq: number): void {
    if (owner === 0) return; // unattributed samples are never ranked
    const link = this.#linkOf(owner) ?? this.#link(owner);
    const { sum, count, latestSum, latestCount } = link.totals;
    const { latest, latestSeq } = link;
    link.samples += 1;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = values[base + m] as number;
      if (value === MISSING) continue;
      sum[m] += value;
      count[m] += 1;
      const previous = latest[m] as number;
      if (previous === MISSING) {
        latestSum[m] += value;
        latestCount[m] += 1;
      } else {
        latestSum[m] += value - previous;
      }
      latest[m] = value;
      latestSeq[m] = seq;
    }
  }

  remove(owner: number, values: Uint16Array, base: number, seq: number): void {
    if (owner === 0) return;
    const link = this.#linkOf(owner);
    if (link === undefined) return;
    const { sum, count, latestSum, latestCount } = link.totals;
    for (let m = 0; m < METRIC_COUNT; m += 1) {
      const value = values[base + m] as number;
      if (value === MISSING) continue;
      sum[m] -= value;
      count[m] -= 1;
      // Samples leave oldest first: when the latest leaves, none of this metric is left on the GPU.
      if (link.latestSeq[m] === seq) {
        latestSum[m] -= value;
        latestCount[m] -= 1;
        link.latest[m] = MISSING;
      }
    }
    link.samples -= 1;
    if (link.samples > 0) return;
    this.#links.splice(this.#links.indexOf(link), 1);
    link.totals.links -= 1;
    if (link.totals.links === 0) this.#owners.delete(owner);
  }

  #linkOf(owner: number): GpuLink | undefined {
    for (const link of this.#links) if (link.owner === owner) return link;
    return undefined;
  }

  #link(owner: number): GpuLink {
    let totals = this.#owners.get(owner);
    if (totals === undefined) this.#owners.set(owner, (totals = new OwnerTotals()));
    const link = new GpuLink(owner, totals);
    totals.links += 1;
    this.#links.push(link);
    return link;
  }
}
