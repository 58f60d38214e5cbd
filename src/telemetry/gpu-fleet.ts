// Every GPU seen by any exporter, each with its rings, and which workloads used which GPU. Summaries
// of a workload read only the rings of its GPUs and only the samples tagged with it. GPUs and
// workload links that have seen nothing for the longest ring span (24 h) are let go.
import { GpuRings, RAW_SPAN_SECONDS, type Resolution } from './gpu-rings.js';
import { decodeMetric } from './metric-codec.js';
import { OwnerIds } from './owner-ids.js';
import type { WindowSummary } from './window-summary.js';

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

export class GpuFleet {
  readonly #rawSlots: number;
  readonly #gpus = new Map<string, GpuEntry>();
  /** workload id → (GPU key → time of the workload's newest sample on it). */
  readonly #gpusOfWorkload = new Map<string, Map<string, number>>();
  readonly #owners = new OwnerIds();
  #ringBytes = 0;

  constructor(options: { rawSlots: number }) {
    this.#rawSlots = options.rawSlots;
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
        rings: new GpuRings({ rawSlots: this.#rawSlots }), lastSeen: sample.time, owner: 0,
      };
      this.#gpus.set(entry.key, entry);
      this.#ringBytes += entry.rings.byteLength;
    }
    const owner = sample.workloadId === undefined ? 0 : this.#owners.numberOf(sample.workloadId);
    if (!entry.rings.record(sample.time, owner, sample.stored)) return null;
    entry.lastSeen = sample.time;
    entry.owner = owner;
    if (gpu.hostname !== undefined && gpu.hostname !== entry.hostname) entry.hostname = ownCopy(gpu.hostname);
    if (gpu.modelName !== undefined && gpu.modelName !== entry.modelName) entry.modelName = ownCopy(gpu.modelName);
    if (sample.workloadId !== undefined) {
      let gpus = this.#gpusOfWorkload.get(sample.workloadId);
      if (gpus === undefined) this.#gpusOfWorkload.set(sample.workloadId, (gpus = new Map()));
      gpus.set(entry.key, sample.time);
    }
    return entry.key;
  }

  /** Folds the workload's samples inside [from, to] (s) into `into`, at the resolution the span needs. */
  collect(workloadId: string, window: { from: number; to: number }, into: WindowSummary): void {
    const owner = this.#owners.find(workloadId);
    const gpus = this.#gpusOfWorkload.get(workloadId);
    if (owner === undefined || gpus === undefined) return;
    const resolution = resolutionFor(window.to - window.from);
    for (const [key, lastSeen] of gpus) {
      if (lastSeen < window.from) continue;
      this.#gpus.get(key)?.rings.collect(resolution, { owner, from: window.from, to: window.to }, into);
    }
  }

  /**
   * Every attributed workload's mean and current value of one metric over raw samples in [from, to]:
   * one pass over every GPU's last hour.
   */
  rank(slot: number, window: { from: number; to: number }): Map<string, { avg: number; current: number }> {
    const byOwner = new Map<number, { sum: number; count: number; latestSum: number; latestCount: number }>();
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
      result.set(workloadId, {
        avg: Math.round(decodeMetric(slot, totals.sum / totals.count) * 100) / 100,
        current: Math.round(decodeMetric(slot, totals.latestSum / totals.latestCount) * 100) / 100,
      });
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
      this.#gpus.delete(key);
      this.#ringBytes -= entry.rings.byteLength;
      gpus += 1;
    }
    for (const [workloadId, links] of this.#gpusOfWorkload) {
      for (const [key, lastSeen] of links) if (lastSeen < horizon || !this.#gpus.has(key)) links.delete(key);
      if (links.size > 0) continue;
      this.#gpusOfWorkload.delete(workloadId);
      this.#owners.release(workloadId);
      workloads += 1;
    }
    return { gpus, workloads };
  }

  stats(): { gpus: number; attributedGpus: number; workloads: number; ringBytes: number } {
    let attributedGpus = 0;
    for (const entry of this.#gpus.values()) if (entry.owner !== 0) attributedGpus += 1;
    return { gpus: this.#gpus.size, attributedGpus, workloads: this.#gpusOfWorkload.size, ringBytes: this.#ringBytes };
  }
}
