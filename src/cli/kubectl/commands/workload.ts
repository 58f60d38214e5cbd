// kubectl gpucap workload ID: the full record, one field per line. An organization with prices gets
// the record's cost fields too (docs/api.md, "Cost"), in its currency; without prices the record has
// none, and neither has the table.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { duration, gpuHours, kwh, money, share, text } from '../output/units.js';

type Value = string | number | boolean | null;
type Record_ = Record<string, Value>;
interface Field {
  field: string;
  value: string;
  raw: Value;
}

// How each field of the record reads, some in the light of others (the currency of a cost); the others as they are.
const SHOWN: Record<string, (v: Value, record: Record_) => string> = {
  duration_seconds: (v) => duration(v as number),
  queue_seconds: (v) => duration(v as number),
  gpu_hours_used: (v) => gpuHours(v as number),
  idle_gpu_hours: (v) => gpuHours(v as number | null),
  gpu_efficiency: (v) => share(v as number | null),
  utilization_coverage: (v) => share(v as number),
  energy_kwh: (v) => kwh(v as number | null),
  energy_coverage: (v) => share(v as number),
  // null: GPU time that no rate matched, which the API does not guess.
  cost: (v, record) => (v === null ? 'unpriced' : money(v as number, String(record.currency))),
  energy_cost: (v, record) => money(v as number | null, String(record.currency)),
  unpriced_gpu_hours: (v) => gpuHours(v as number),
};

export async function workloadView(client: ApiClient, id: string): Promise<View<Field>> {
  const body: { data: Record_ } = await client.get(`/v1/workloads/${encodeURIComponent(id)}`);
  const rows = Object.entries(body.data).map(([field, raw]) => ({ field, raw, value: (SHOWN[field] ?? text)(raw, body.data) }));
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
