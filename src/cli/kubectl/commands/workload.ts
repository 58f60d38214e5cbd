// kubectl gpucap workload ID: the full record, one field per line.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { duration, gpuHours, kwh, share, text } from '../output/units.js';

type Record_ = Record<string, string | number | boolean | null>;
interface Field {
  field: string;
  value: string;
  raw: string | number | boolean | null;
}

// How each field of the record reads; the others as they are.
const SHOWN: Record<string, (v: Record_[string]) => string> = {
  duration_seconds: (v) => duration(v as number),
  queue_seconds: (v) => duration(v as number),
  gpu_hours_used: (v) => gpuHours(v as number),
  idle_gpu_hours: (v) => gpuHours(v as number | null),
  gpu_efficiency: (v) => share(v as number | null),
  utilization_coverage: (v) => share(v as number),
  energy_kwh: (v) => kwh(v as number | null),
  energy_coverage: (v) => share(v as number),
};

export async function workloadView(client: ApiClient, id: string): Promise<View<Field>> {
  const body: { data: Record_ } = await client.get(`/v1/workloads/${encodeURIComponent(id)}`);
  const rows = Object.entries(body.data).map(([field, raw]) => ({ field, raw, value: (SHOWN[field] ?? text)(raw) }));
  return {
    data: body.data,
    rows,
    columns: [
      { header: 'FIELD', cell: (f) => f.field },
      { header: 'VALUE', cell: (f) => f.value, shrink: true },
    ],
    fields: [['field', (f) => f.field], ['value', (f) => f.raw]],
  };
}
