// After the initial sync, a few rows are read back and compared with the objects they came from:
// standalone pods and Jobs of the organization, spread over the cluster, with the status, initiative
// and instance type the mappers should have derived. The expectations are drawn where the objects
// are (the simulated cluster's process); the reads are made by the benchmark.
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import type { GeneratedCluster } from '../../data/generate-cluster.js';
import type { SpotCheck } from './kube-sim-protocol.js';

const POD_STATUS: Record<string, string> = { Pending: 'pending', Running: 'running', Succeeded: 'completed', Failed: 'failed' };

/** Up to `perKind` standalone pods and `perKind` Jobs of `organization`, evenly spaced through the cluster. */
export function spotChecksOf(cluster: GeneratedCluster, organization: string, perKind: number): SpotCheck[] {
  if (perKind <= 0) return [];
  const namespaceOf = new Map(cluster.namespaceInfo.map((ns) => [ns.name, ns]));
  const instanceTypeOf = new Map(cluster.nodes.map((n) => [n.metadata.name, n.metadata.labels?.['node.kubernetes.io/instance-type'] ?? '']));
  const inOrganization = (o: KubeObject) => namespaceOf.get(o.metadata.namespace ?? '')?.organizationId === organization;
  const spread = (list: KubeObject[]) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / perKind)) === 0).slice(0, perKind);
  const label = (kind: string, o: KubeObject) => `${kind} ${o.metadata.namespace}/${o.metadata.name}`;

  const pods = spread(cluster.pods.filter((p) => p.metadata.ownerReferences === undefined && inOrganization(p))).map((pod): SpotCheck => {
    const phase = (pod.status as { phase: string }).phase;
    const node = (pod.spec as { nodeName?: string }).nodeName;
    return {
      id: pod.metadata.uid ?? '',
      label: label('Pod', pod),
      expected: {
        status: POD_STATUS[phase] ?? phase,
        initiative_id: pod.metadata.labels?.['gpucap.io/initiative'] ?? namespaceOf.get(pod.metadata.namespace ?? '')?.initiativeId ?? '',
        instance_type: node === undefined ? 'unknown' : (instanceTypeOf.get(node) ?? ''),
      },
    };
  });
  const jobs = spread(cluster.jobs.filter(inOrganization)).map((job): SpotCheck => ({
    id: job.metadata.uid ?? '',
    label: label('Job', job),
    expected: { status: jobStatus(job), initiative_id: namespaceOf.get(job.metadata.namespace ?? '')?.initiativeId ?? '' },
  }));
  return [...pods, ...jobs];
}

function jobStatus(job: KubeObject): string {
  const status = job.status as { conditions?: { type: string }[]; startTime?: string };
  const types = (status.conditions ?? []).map((c) => c.type);
  if (types.includes('Complete')) return 'completed';
  if (types.includes('Failed')) return 'failed';
  if ((job.spec as { suspend?: boolean }).suspend === true) return 'pending';
  return status.startTime === undefined || status.startTime === '' ? 'pending' : 'running';
}

/** GETs each row, one at a time, and lists every field that differs (or the status code that came instead). */
export async function runSpotChecks(api: { url: string; headers: Record<string, string> }, checks: readonly SpotCheck[]): Promise<{ checked: number; mismatches: string[] }> {
  const mismatches: string[] = [];
  for (const check of checks) {
    const response = await fetch(`${api.url}/v1/workloads/${check.id}`, { headers: api.headers });
    const body = (await response.json()) as { data?: Record<string, unknown> };
    if (response.status !== 200) {
      mismatches.push(`${check.label}: HTTP ${response.status}`);
      continue;
    }
    for (const [field, value] of Object.entries(check.expected)) {
      if (body.data?.[field] !== value) mismatches.push(`${check.label}: ${field} ${JSON.stringify(body.data?.[field])}, expected ${JSON.stringify(value)}`);
    }
  }
  return { checked: checks.length, mismatches };
}
