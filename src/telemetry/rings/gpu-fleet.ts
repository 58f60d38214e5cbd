// Every GPU seen by any exporter, each with its rings, and which workloads used which GPU. Summaries
// of a workload read only the rings of its GPUs and only the samples tagged with it; rankings read
// the last-hour totals every GPU's raw ring keeps up to date. GPUs and workload links that have seen
// nothing for the longest ring span (24 h) are let go.
import { GpuRings, gpuRingBytes, RAW_SPAN_SECONDS, type Resolution } from './gpu-rings.js';
import { LastHourTotals, type OwnerFigures } from './last-hour-totals.js';
import { decodeMetric } from './metric-codec.js';
import { OldestCounted } from './oldest-counted.js';
import { OwnerIds } from './owner-ids.js';
import type { PercentileHistograms } from '../summaries/percentile-histogram.js';
import { RingSlabs } from './ring-slabs.js';
import type { WindowSummary } from '../summaries/window-summary.js';

const DAY_SECONDS = 86_400;
const ONE_MINUTE_SPAN_SECONDS = 6 * 3600;

export interface GpuIdentity {
  key: string;
  clusterId: string;
  hostname: string | undefined;
  modelName: string | undefined;
}

interface GpuEntry extends GpuIdentity {
  rings: GpuRings;
  /** Place in the fleet's OldestCounted. */
  index: number;
  lastSeen: number;
  /** Owner number of the newest sample (0: none). */
  owner: number;
}

// Labels come out of the parser as slices of the scrape's text, and V8 keeps a whole string alive
// while any slice of it lives: one UUID kept as a map key would hold the full payload. What is kept
// beyond the scrape is copied into a string of its own.
function ownCopy<T extends string | undefined>(text: T): T {
  return (text === undefined ? undefined : Buffer.from(text, 'utf8').toString('utf8')) as T;
}

/** The finest resolution whose rings cover a window of `spanSeconds`. */
export function resolutionFor(spanSeconds: number): Resolution {
  return spanSeconds <= RAW_SPAN_SECONDS ? 'raw' : spanSeconds <= ONE_MINUTE_SPAN_SECONDS ? 0 : 1;
}

/** A ranked workload's figures in reported units, rounded as the API reports them. */
function rankedFigures(slot: number, figures: OwnerFigures): { avg: number; current: number } {
  return {
    avg: Math.round(decodeMetric(slot, figures.sum / figures.count) * 100) / 100,
    current: Math.round(decodeMetric(slot, figures.latestSum / figures.latestCount) * 100) / 100,
  };
}

export class GpuFleet {
  readonly #rawSlots: number;
  readonly #gpus = new Map<string, GpuEntry>();
  /** workload id → (GPU → time of the workload's newest sample on it). */
  readonly #gpusOfWorkload = new Map<string, Map<GpuEntry, number>>();
  readonly #owners = new OwnerIds();
  readonly #lastHour = new LastHourTotals();
  readonly #oldestCounted = new OldestCounted<GpuEntry>();
  readonly #slabs: RingSlabs;
  /** Time (s) of the newest sample recorded, on any GPU. */
  #newestTime = -Infinity;
  /** The latest window start the last-hour totals were trimmed to by a ranking. */
  #trimmedTo = -Infinity;

  constructor(options: { rawSlots: number }) {
    this.#rawSlots = options.rawSlots;
    this.#slabs = new RingSlabs(gpuRingBytes(options.rawSlots));
  }

  /** Makes room for the rings of `gpus` GPUs in all, in one allocation, before a tick meets them. */
  reserve(gpus: number): void {
    this.#slabs.reserve(gpus);
  }

  /**
   * One GPU's sample at `time` (s): `stored` per metric slot, owned by `workloadId` when attributed.
   * Returns the GPU's key as held here (safe to keep), or null when the sample was older than the GPU's newest.
   */
  record(gpu: GpuIdentity, sample: { time: number; stored: ArrayLike<number>; workloadId: string | undefined }): string | null {
    let entry = this.#gpus.get(gpu.key);
    if (entry === undefined) {
      entry = {
        key: ownCopy(gpu.key), clusterId: gpu.clusterId, hostname: ownCopy(gpu.hostname), modelName: ownCopy(gpu.modelName),
        rings: new GpuRings({ rawSlots: this.#rawSlots, totals: this.#lastHour.share(), slot: this.#slabs.take() }),
        index: -1, lastSeen: sample.time, owner: 0,
      };
      entry.index = this.#oldestCounted.add(entry);
      this.#gpus.set(entry.key, entry);
    }
    const owner = sample.workloadId === undefined ? 0 : this.#owners.numberOf(sample.workloadId);
    if (!entry.rings.record(sample.time, owner, sample.stored)) return null;
    // No ranking can ask for a window starting before the newest sample's hour: older samples leave the totals now.
    entry.rings.releaseBefore(sample.time - RAW_SPAN_SECONDS);
    this.#oldestCounted.set(entry.index, entry.rings.oldestCountedTime());
    if (sample.time > this.#newestTime) this.#newestTime = sample.time;
    entry.lastSeen = sample.time;
    entry.owner = owner;
    if (gpu.hostname !== undefined && gpu.hostname !== entry.hostname) entry.hostname = ownCopy(gpu.hostname);
    if (gpu.modelName !== undefined && gpu.modelName !== entry.modelName) entry.modelName = ownCopy(gpu.modelName);
    if (sample.workloadId !== undefined) {
      let gpus = this.#gpusOfWorkload.get(sample.workloadId);
      if (gpus === undefined) this.#gpusOfWorkload.set(sample.workloadId, (gpus = new Map()));
      gpus.set(entry, sample.time);
    }
    return entry.key;
  }

  /** Folds the workload's samples inside [from, to] (s) into `into`, at the resolution the span needs. */
  collect(workloadId: string, window: { from: number; to: number }, into: WindowSummary): void {
    const owner = this.#owners.find(workloadId);
    const gpus = this.#gpusOfWorkload.get(workloadId);
    if (owner === undefined || gpus === undefined) return;
    const resolution = resolutionFor(window.to - window.from);
    const ownerWindow = { owner, from: window.from, to: window.to };
    for (const [entry, lastSeen] of gpus) if (lastSeen >= window.from) entry.rings.collect(resolution, ownerWindow, into);
  }

  /**
   * Counts the workload's values inside [from, to] (s) into `histograms`, per metric slot: the
   * samples or buckets collect() reads for the same window, or those of `resolution` when given.
   */
  countValues(workloadId: string, window: { from: number; to: number }, histograms: PercentileHistograms, resolution?: Resolution): void {
    const owner = this.#owners.find(workloadId);
    const gpus = this.#gpusOfWorkload.get(workloadId);
    if (owner === undefined || gpus === undefined) return;
    const tier = resolution ?? resolutionFor(window.to - window.from);
    const ownerWindow = { owner, from: window.from, to: window.to };
    for (const [entry, lastSeen] of gpus) if (lastSeen >= window.from) entry.rings.countValues(tier, ownerWindow, histograms);
  }

  /** Time (s) of the newest sample recorded, on any GPU; -Infinity before the first. */
  get newestTime(): number {
    return this.#newestTime;
  }

  /**
   * Every attributed workload's mean and current value of one metric over the raw samples in [from, to].
   * A last-hour window ending at or after the newest sample is read from the running totals (one entry
   * per workload); any other window walks every GPU's raw ring.
   */
  rank(slot: number, window: { from: number; to: number }): Map<string, { avg: number; current: number }> {
    const fromTotals = window.to - window.from === RAW_SPAN_SECONDS && window.to >= this.#newestTime && window.from >= this.#trimmedTo;
    if (!fromTotals) return this.#scanRank(slot, window);
    // Samples that aged out of the hour since their GPU last reported leave the totals first.
    this.#oldestCounted.forEachOlder(window.from, (entry, index) => {
      entry.rings.releaseBefore(window.from);
      this.#oldestCounted.set(index, entry.rings.oldestCountedTime());
    });
    this.#trimmedTo = window.from;
    const result = new Map<string, { avg: number; current: number }>();
    for (const [owner, figures] of this.#lastHour.figures(slot)) {
      const workloadId = this.#owners.idOf(owner);
      if (workloadId === undefined) continue;
      result.set(workloadId, rankedFigures(slot, figures));
    }
    return result;
  }

  /** rank() by walking every GPU's raw samples in the window. */
  #scanRank(slot: number, window: { from: number; to: number }): Map<string, { avg: number; current: number }> {
    const byOwner = new Map<number, OwnerFigures>();
    // Owners already met on the GPU being read: only their newest run gives the GPU's latest value.
    const seen: number[] = [];
    const visit = (owner: number, sum: number, count: number, newest: number): void => {
      if (owner === 0) return;
      let totals = byOwner.get(owner);
      if (totals === undefined) byOwner.set(owner, (totals = { sum: 0, count: 0, latestSum: 0, latestCount: 0 }));
      totals.sum += sum;
      totals.count += count;
      if (!seen.includes(owner)) {
        seen.push(owner);
        totals.latestSum += newest;
        totals.latestCount += 1;
      }
    };
    for (const entry of this.#gpus.values()) {
      if (entry.lastSeen < window.from) continue;
      seen.length = 0;
      entry.rings.visitRawRuns(slot, window, visit);
    }
    const result = new Map<string, { avg: number; current: number }>();
    for (const [owner, totals] of byOwner) {
      const workloadId = this.#owners.idOf(owner);
      if (workloadId === undefined) continue;
      result.set(workloadId, rankedFigures(slot, totals));
    }
    return result;
  }

  /** Lets go of GPUs silent and workload links older than the 24 h the rings span, as of `now` (s). */
  prune(now: number): { gpus: number; workloads: number } {
    const horizon = now - DAY_SECONDS;
    let gpus = 0;
    let workloads = 0;
    for (const [key, entry] of this.#gpus) {
      if (entry.lastSeen >= horizon) continue;
      entry.rings.releaseBefore(Infinity);
      this.#oldestCounted.remove(entry.index);
      this.#gpus.delete(key);
      this.#slabs.give(entry.rings.slot);
      gpus += 1;
    }
    for (const [workloadId, links] of this.#gpusOfWorkload) {
      for (const [entry, lastSeen] of links) if (lastSeen < horizon || this.#gpus.get(entry.key) !== entry) links.delete(entry);
      if (links.size > 0) continue;
      this.#gpusOfWorkload.delete(workloadId);
      this.#owners.release(workloadId);
      workloads += 1;
    }
    return { gpus, workloads };
  }

  /**
   * `lastHourWorkloads`: workloads the last-hour totals hold samples of (those of the past hour, as of
   * the latest sample or ranking). `ringBytes`: the GPUs' rings; `ringReservedBytes`: the slabs they
   * are carved from, free slots included.
   */
  stats(): {
    gpus: number;
    attributedGpus: number;
    workloads: number;
    lastHourWorkloads: number;
    ringBytes: number;
    ringReservedBytes: number;
  } {
    let attributedGpus = 0;
    for (const entry of this.#gpus.values()) if (entry.owner !== 0) attributedGpus += 1;
    const slabs = this.#slabs.stats();
    return {
      gpus: this.#gpus.size, attributedGpus, workloads: this.#gpusOfWorkload.size, lastHourWorkloads: this.#lastHour.owners,
      ringBytes: slabs.usedBytes, ringReservedBytes: slabs.reservedBytes,
    };
  }
}
