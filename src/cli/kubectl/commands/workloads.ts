// kubectl gpucap workloads: the list, every page followed (or the first --limit rows), with the
// API's filters under kubectl-like names.
import type { ApiClient, Query } from '../api-client.js';
import type { View } from '../output/formats.js';
import { age } from '../output/units.js';
import { fieldsOf } from '../output/fields.js';

export interface WorkloadItem {
  workload_id: string;
  name: string;
  status: string;
  submitted_by: string;
  initiative_id: string;
  instance_type: string;
  gpu_count: number;
  submitted_at: string;
  started_at: string | null;
}

interface ListBody {
  data: { workloads: WorkloadItem[] };
  metadata: { next_token?: string; total_count: number };
}

export interface WorkloadsOptions {
  filters: Query;
  /** The most rows to show; undefined: every match. */
  limit: number | undefined;
}

const PAGE = 100;

export async function workloadsView(client: ApiClient, options: WorkloadsOptions, now: number): Promise<View<WorkloadItem>> {
  const rows: WorkloadItem[] = [];
  let token: string | undefined;
  let total: number;
  do {
    const wanted = options.limit === undefined ? PAGE : Math.min(PAGE, options.limit - rows.length);
    const page: ListBody = await client.get('/v1/workloads', { ...options.filters, limit: wanted, next_token: token });
    rows.push(...page.data.workloads);
    total = page.metadata.total_count;
    token = page.metadata.next_token;
  } while (token !== undefined && (options.limit === undefined || rows.length < options.limit));
  return {
    data: { workloads: rows, total_count: total },
    rows,
    columns: [
      { header: 'NAME', cell: (w) => w.name, shrink: true },
      { header: 'STATUS', cell: (w) => w.status },
      { header: 'TEAM', cell: (w) => w.initiative_id, shrink: true },
      { header: 'USER', cell: (w) => w.submitted_by, shrink: true },
      { header: 'GPUS', cell: (w) => String(w.gpu_count), align: 'right' },
      { header: 'INSTANCE TYPE', cell: (w) => w.instance_type, wide: true },
      { header: 'SUBMITTED', cell: (w) => age(w.submitted_at, now), align: 'right' },
      { header: 'STARTED', cell: (w) => age(w.started_at, now), align: 'right' },
      { header: 'WORKLOAD ID', cell: (w) => w.workload_id, wide: true },
    ],
    fields: fieldsOf<WorkloadItem>([
      'workload_id',
      'name',
      'status',
      'submitted_by',
      'initiative_id',
      'instance_type',
      'gpu_count',
      'submitted_at',
      'started_at',
    ]),
  };
}
