// After a relist: the unfinished rows whose object is not in the snapshot vanished while the service
// was away (or its watch was broken). They become cancelled now and stop accruing GPU time now
// (DECISIONS "Status and times").
import type { Clock } from '../../domain/clock.js';
import { isTerminal, type WorkloadKind, type WorkloadRecord } from '../../domain/workload.js';
import { failureReasonOf } from '../failure/failure-reason.js';
import type { JobPodCache } from '../caches/job-pod-cache.js';
import type { WorkloadMapper } from '../mapping/workload-mapper.js';
import type { IndexerLogger, WorkloadSink } from '../workload-sink.js';
import type { WriteBatch } from './write-batch.js';

export interface ReconcileOptions {
  sink: WorkloadSink;
  /** Rows queued or being written but not in the store yet, oldest first (a later one wins). */
  unwritten: readonly WorkloadRecord[];
  batch: WriteBatch;
  /** The pods of Jobs this process has seen. */
  jobPods: JobPodCache;
  mapper: WorkloadMapper;
  clusterId: string;
  /** The relist covered this namespace only: rows elsewhere are not judged by it. */
  namespace?: string;
  clock: Clock;
  logger: IndexerLogger;
}

/**
 * Queues the cancellation of the unfinished `kind` rows of the cluster missing from `present` (rows
 * in the store, and rows queued or being written that the store does not have yet), and the closing
 * of their open pod intervals; returns how many rows it cancelled.
 */
export function cancelVanished(kind: WorkloadKind, present: ReadonlySet<string>, options: ReconcileOptions): number {
  const { sink, unwritten, batch, jobPods, mapper, clusterId, namespace, clock, logger } = options;
  const now = clock.now();
  const known = new Map<string, WorkloadRecord>();
  for (const row of sink.listUnfinished(clusterId)) known.set(row.workloadId, row);
  for (const row of unwritten) known.set(row.workloadId, row);
  const vanished = [...known.values()].filter(
    (row) => !isTerminal(row.status) &&
      row.kind === kind &&
      (namespace === undefined || row.namespace === namespace) &&
      !present.has(row.workloadId),
  );
  if (vanished.length === 0) return 0;
  for (const row of vanished) {
    const cancelled: WorkloadRecord = { ...row, status: 'cancelled', completedAt: now, exitCode: row.exitCode ?? 0 };
    // Nothing says why it went: the same fallback as any cancelled workload's (deleted).
    batch.addRow({ ...cancelled, failureReason: failureReasonOf(cancelled) });
    // A Job's pods that this process has seen may end earlier (their own deletion or finish).
    for (const pod of jobPods.podsOf(row.workloadId)) {
      batch.addInterval(mapper.podInterval(pod, { workloadId: row.workloadId, deleted: { at: now } }));
    }
  }
  // Every other open interval ends now, including those of pods only an earlier run of the service
  // saw: without this they would stay open for as long as the row is kept. Queued, not written now,
  // so that the flush writes the cancelled rows first (the store then keeps these intervals closed).
  const workloadIds = vanished.map((row) => row.workloadId);
  batch.closeOpenIntervals(workloadIds, now);
  logger.warn({ clusterId, kind, workloadIds }, `${vanished.length} unfinished workload(s) missing after a relist marked cancelled`);
  return vanished.length;
}
