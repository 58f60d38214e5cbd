// kubectl gpucap health: the service's status, then each check.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { text } from '../output/units.js';

interface Check {
  check: string;
  status: string;
}
interface HealthBody {
  data: { status: string; version: string; timestamp: string; checks: { name: string; status: string }[] };
}

export async function healthView(client: ApiClient): Promise<View<Check>> {
  // Health answers 503 with its body while unhealthy: that body is the answer, not an error.
  const body = await client.get<HealthBody>('/v1/health', {}, [503]);
  const checks = body.data.checks.map((c) => ({ check: c.name, status: c.status }));
  const rows = [{ check: `service ${text(body.data.version)}`, status: body.data.status }, ...checks];
  return {
    data: body.data,
    rows,
    columns: [
      { header: 'CHECK', cell: (c) => c.check, shrink: true },
      { header: 'STATUS', cell: (c) => c.status },
    ],
    fields: [['check', (c) => c.check], ['status', (c) => c.status]],
  };
}
