// The `checks` of GET /v1/health: the readiness conditions folded into one entry per source, so a
// dashboard sees which cluster or feed is failing without the reasons (those stay on the admin port).
import type { SourceCondition } from '../query/ports.js';

export const HEALTH_CHECK_STATES = ['ok', 'degraded', 'pending'] as const;
export type HealthCheckState = (typeof HEALTH_CHECK_STATES)[number];

export interface HealthCheck {
  name: string;
  status: HealthCheckState;
}

/** Condition name → check name; conditions of no check (the startup gate) only count for the overall status. */
function checkName(condition: string): string | null {
  if (condition === 'index') return 'index';
  if (condition === 'telemetry') return 'exporters';
  if (condition === 'capacity') return 'budgets';
  if (condition.startsWith('cluster/')) return `cluster/${condition.split('/')[1]}`;
  if (condition.startsWith('remote-kubeconfig/')) return 'remote-kubeconfigs';
  return null;
}

const ORDER = ['index', 'cluster/', 'remote-kubeconfigs', 'exporters', 'budgets'];
const rank = (name: string) => ORDER.findIndex((prefix) => name === prefix || (prefix.endsWith('/') && name.startsWith(prefix)));

/** A failing condition makes its check degraded; one not met yet (and not failing) pending. */
export function healthChecks(conditions: Record<string, SourceCondition>): HealthCheck[] {
  const checks = new Map<string, HealthCheckState>();
  for (const [condition, state] of Object.entries(conditions)) {
    const name = checkName(condition);
    if (name === null) continue;
    const own: HealthCheckState = state.failure !== null ? 'degraded' : state.ready ? 'ok' : 'pending';
    const previous = checks.get(name);
    if (previous === undefined || severity(own) > severity(previous)) checks.set(name, own);
  }
  return [...checks]
    .map(([name, status]) => ({ name, status }))
    .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function severity(state: HealthCheckState): number {
  return state === 'ok' ? 0 : state === 'pending' ? 1 : 2;
}
