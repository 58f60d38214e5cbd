// Random writes for the property tests of the store: every write a cluster's writer and retention
// have, over a few ids, so that writes keep meeting the same rows: upserts that move a workload
// between statuses, labels, instance types and days; pod intervals that open, close, reopen and move
// between workloads (and name workloads not written yet); both together (writeWorkloads);
// closeOpenIntervals; retention deletes; usage saved as the telemetry flow saves it (before or after
// the row, with or without XID errors).
import fc from 'fast-check';
import type { GpuUsage } from '../../src/domain/gpu-usage.js';
import { TERMINAL_STATUSES, WORKLOAD_STATUSES, type PodGpuInterval, type WorkloadRecord } from '../../src/domain/workload.js';
import { DAY_MS, T0 } from './rollup-history.js';

export const WORKLOAD_IDS = ['w-0', 'w-1', 'w-2', 'w-3', 'w-4', 'w-5'];
const POD_UIDS = ['p-0', 'p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6', 'p-7'];

export type Command =
  | { kind: 'workloads'; records: WorkloadRecord[] }
  | { kind: 'pods'; intervals: PodGpuInterval[] }
  | { kind: 'write'; records: WorkloadRecord[]; intervals: PodGpuInterval[] }
  | { kind: 'close'; workloadIds: string[]; at: number }
  | { kind: 'retention'; cutoff: number; limit: number }
  | { kind: 'usage'; workloadId: string; usage: GpuUsage };

/** The writes the commands call: a cluster's writer with writeWorkloads, and retention. */
export interface CommandTarget {
  upsertWorkloads(records: readonly WorkloadRecord[]): Promise<number>;
  upsertPodIntervals(intervals: readonly PodGpuInterval[]): Promise<number>;
  writeWorkloads(records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]): Promise<{ rows: number; intervals: number }>;
  closeOpenIntervals(workloadIds: readonly string[], at: number): Promise<number>;
  deleteFinishedBatch(cutoffMs: number, limit: number): Promise<number>;
  /** Adds what the workload's GPUs did, as a lifetime save (SQLite) or a bucket (PostgreSQL) does. */
  saveUsage(workloadId: string, usage: GpuUsage): Promise<number>;
}

/** Around T0: midnights and the ms before them, any ms of 3 days, now and then 1970 itself. */
export const time = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: T0 - 3 * DAY_MS, max: T0 + DAY_MS }) },
  { weight: 2, arbitrary: fc.constantFrom(T0 - 2 * DAY_MS, T0 - DAY_MS, T0 - DAY_MS - 1, T0, T0 - 1) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1000) },
);

export const record: fc.Arbitrary<WorkloadRecord> = fc
  .record({
    workloadId: fc.constantFrom(...WORKLOAD_IDS),
    organizationId: fc.constantFrom('acme', 'globex'),
    status: fc.constantFrom(...WORKLOAD_STATUSES),
    submittedBy: fc.constantFrom('alice', 'bob'),
    initiativeId: fc.constantFrom('llm', 'vision', 'infra'),
    instanceType: fc.constantFrom('p5', 'a3', 'unknown'),
    gpuCount: fc.constantFrom(0, 1, 8),
    submittedAt: time,
    startedAt: fc.option(time),
    completedAt: time,
    exitCode: fc.constantFrom(0, 1, 137),
    failureReason: fc.constantFrom('oom_killed', 'nonzero_exit', 'gpu_error'),
    isManaged: fc.boolean(),
    resourceVersion: fc.constantFrom('', '1', '2', '3'),
  })
  .map((r) => {
    const finished = TERMINAL_STATUSES.includes(r.status);
    return {
      ...r,
      clusterId: 'local',
      namespace: 'ns',
      name: r.workloadId,
      kind: 'Job' as const,
      startedAt: r.status === 'pending' ? null : r.startedAt,
      completedAt: finished ? r.completedAt : null,
      exitCode: finished ? r.exitCode : null,
      failureReason: r.status === 'failed' ? r.failureReason : r.status === 'cancelled' ? 'deleted' : null,
    };
  });

export const interval: fc.Arbitrary<PodGpuInterval> = fc.record({
  podUid: fc.constantFrom(...POD_UIDS),
  // Sometimes a workload that is not written yet: the interval is skipped.
  workloadId: fc.constantFrom(...WORKLOAD_IDS, 'w-unknown'),
  gpus: fc.constantFrom(0, 1, 2, 8),
  startedAt: fc.option(time, { freq: 4 }),
  // Open half the time: closeOpenIntervals has intervals to close.
  finishedAt: fc.option(time, { freq: 2 }),
});

export const records = fc.array(record, { minLength: 1, maxLength: 6 });
export const intervals = fc.array(interval, { minLength: 1, maxLength: 8 });

const usage: fc.Arbitrary<GpuUsage> = fc
  .record({ samples: fc.integer({ min: 0, max: 8 }), util: fc.integer({ min: 0, max: 10_000 }), idle: fc.integer({ min: 0, max: 8 }), power: fc.option(fc.integer({ min: 0, max: 7000 })), errors: fc.constantFrom(0, 0, 1) })
  .map(({ samples, util, idle, power, errors }) => ({
    utilSeconds: samples * 15,
    utilWeighted: util * samples * 15,
    idleSeconds: Math.min(idle, samples) * 15,
    powerSeconds: power === null ? 0 : samples * 15,
    energyDj: (power ?? 0) * samples * 15,
    gpuErrors: errors,
  }));

export const command: fc.Arbitrary<Command> = fc.oneof(
  // Sometimes for a workload not written yet: its usage waits for the row.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('usage' as const), workloadId: fc.constantFrom(...WORKLOAD_IDS, 'w-unknown'), usage }) },
  { weight: 4, arbitrary: records.map((r) => ({ kind: 'workloads' as const, records: r })) },
  { weight: 4, arbitrary: intervals.map((i) => ({ kind: 'pods' as const, intervals: i })) },
  { weight: 4, arbitrary: fc.tuple(fc.array(record, { maxLength: 6 }), fc.array(interval, { maxLength: 8 })).map(([r, i]) => ({ kind: 'write' as const, records: r, intervals: i })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('close' as const), workloadIds: fc.subarray(WORKLOAD_IDS, { minLength: 1 }), at: time }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retention' as const), cutoff: fc.integer({ min: T0 - 2 * DAY_MS, max: T0 + 2 * DAY_MS }), limit: fc.integer({ min: 1, max: 4 }) }) },
);

/** Runs one command; returns the count it reported (rows and intervals added up for a write). */
export async function apply(target: CommandTarget, c: Command): Promise<number> {
  switch (c.kind) {
    case 'workloads':
      return target.upsertWorkloads(c.records);
    case 'pods':
      return target.upsertPodIntervals(c.intervals);
    case 'write': {
      const written = await target.writeWorkloads(c.records, c.intervals);
      return written.rows + written.intervals;
    }
    case 'close':
      return target.closeOpenIntervals(c.workloadIds, c.at);
    case 'retention':
      return target.deleteFinishedBatch(c.cutoff, c.limit);
    case 'usage':
      return target.saveUsage(c.workloadId, c.usage);
  }
}

/** The pod intervals of a command, those it may move between workloads. */
export function intervalsOf(c: Command): PodGpuInterval[] {
  return c.kind === 'pods' || c.kind === 'write' ? c.intervals : [];
}
