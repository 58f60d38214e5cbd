// What one call of writeWorkloads(records, intervals) changes, decided in code from the stored rows
// and pods it read: the rows to write, the pods to write, and the workloads whose pods changed (their
// GPU aggregates must be summed again). The records are merged first, then the intervals against the
// rows as they will be, each in order, each against what the ones before it left: the same outcome
// as upserting the records, then the intervals, one statement each (SQLite's upsertWorkloads and
// upsertPodIntervals). SQLite's writeWorkloads and PostgreSQL's writer (which passes the last record
// of each id and the last interval of each pod only) follow it; the write rules are write-rules.ts's.
import { isTerminal, type PodGpuInterval, type WorkloadRecord, type WorkloadStatus } from '../../domain/workload.js';
import { toRow, type WorkloadRow } from './row-mapping.js';
import { mergePod, mergeWorkload, type PodRow } from './write-rules.js';

export interface WritePlan {
  /** The rows whose record changes, as they will be, by id (in the order first changed: new rows are inserted in it). */
  readonly rows: ReadonlyMap<string, WorkloadRow>;
  /** The pods that change, as they will be, by uid (in the order first changed). */
  readonly pods: ReadonlyMap<string, PodRow>;
  /** Workloads whose pods change: each pod's owner, and the workload a pod leaves. */
  readonly touched: ReadonlySet<string>;
  /** What each statement-by-statement upsert would have reported written. */
  readonly written: { rows: number; intervals: number };
}

/**
 * The plan for `records` then `intervals` over the stored rows and pods they may meet: the rows of
 * the records' ids, of the intervals' workloads and of the stored pods' owners; the pods of the
 * intervals' uids. An interval whose workload is neither stored nor among the records is skipped.
 */
export function planWrite(
  storedRows: ReadonlyMap<string, WorkloadRow>,
  storedPods: ReadonlyMap<string, PodRow>,
  records: readonly WorkloadRecord[],
  intervals: readonly PodGpuInterval[],
): WritePlan {
  const rows = new Map<string, WorkloadRow>();
  let rowsWritten = 0;
  for (const record of records) {
    const merged = mergeWorkload(rows.get(record.workloadId) ?? storedRows.get(record.workloadId), toRow(record));
    if (merged === null) continue;
    rows.set(record.workloadId, merged);
    rowsWritten += 1;
  }
  const pods = new Map<string, PodRow>();
  const touched = new Set<string>();
  let intervalsWritten = 0;
  for (const interval of intervals) {
    // Pods can be seen before their Job: skipped, and written again with the pod's next event.
    const owner = rows.get(interval.workloadId) ?? storedRows.get(interval.workloadId);
    if (owner === undefined) continue;
    const before = pods.get(interval.podUid) ?? storedPods.get(interval.podUid);
    const incoming: PodRow = {
      pod_uid: interval.podUid,
      workload_id: interval.workloadId,
      // GPU time counts the pod's share where the indexer knows it (whole devices otherwise).
      gpus: interval.share ?? interval.gpus,
      started_at: interval.startedAt,
      finished_at: interval.finishedAt,
    };
    const merged = mergePod(before, incoming, isTerminal(owner.status as WorkloadStatus));
    if (merged === null) continue;
    pods.set(merged.pod_uid, merged);
    intervalsWritten += 1;
    touched.add(merged.workload_id);
    if (before !== undefined) touched.add(before.workload_id);
  }
  return { rows, pods, touched, written: { rows: rowsWritten, intervals: intervalsWritten } };
}

/**
 * The workloads whose stored rows a write of `records` and `intervals` may read or change, given the
 * stored pods of the intervals.
 */
export function workloadsMet(
  records: readonly WorkloadRecord[],
  intervals: readonly PodGpuInterval[],
  storedPods: Iterable<PodRow>,
): Set<string> {
  const ids = new Set(records.map((record) => record.workloadId));
  for (const interval of intervals) ids.add(interval.workloadId);
  for (const pod of storedPods) ids.add(pod.workload_id);
  return ids;
}
