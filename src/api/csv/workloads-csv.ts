// GET /v1/workloads as CSV: the list's fields, then the record's others that need no further read.
import type { WorkloadRecord } from '../../domain/workload.js';
import { toIso } from '../../domain/time.js';
import type { WorkloadExport } from '../../query/export-workloads.js';
import { presentListItem, presentShare } from '../presenters.js';
import { csvFilename, recordsOf, type CsvTable } from './csv-table.js';

const COLUMNS = [
  'workload_id', 'name', 'status', 'submitted_by', 'initiative_id', 'instance_type', 'gpu_count', 'submitted_at', 'started_at',
  'completed_at', 'failure_reason', 'exit_code', 'is_managed', 'cluster_id', 'namespace', 'allocated_gpus', 'gpu_sharing', 'gpu_model',
] as const;

function row(w: WorkloadRecord): Record<(typeof COLUMNS)[number], unknown> {
  return {
    ...presentListItem(w),
    completed_at: toIso(w.completedAt),
    failure_reason: w.failureReason,
    exit_code: w.exitCode,
    is_managed: w.isManaged,
    cluster_id: w.clusterId,
    namespace: w.namespace,
    ...presentShare(w),
  };
}

export function workloadsCsv(exported: WorkloadExport, organizationId: string, now: number): CsvTable {
  async function* records() {
    for await (const page of exported.pages) yield recordsOf(COLUMNS, page.map(row));
  }
  return {
    filename: csvFilename('workloads', organizationId, now),
    columns: COLUMNS,
    records: records(),
    headers: {
      'X-Total-Count': String(exported.totalCount),
      ...(exported.nextToken === null ? {} : { 'X-Next-Token': exported.nextToken }),
    },
  };
}
