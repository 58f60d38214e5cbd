// GET /v1/fleet/nodes: the GPU nodes of the caller's organization now, in the order (cluster_id,
// node), paged like the workloads: next_token is the same signed cursor (cursor.ts), its position
// the last node of the page, bound to the filters.
import { requireWholeOrganization } from '../access/scoped-filter.js';
import type { Scope } from '../access/principal.js';
import type { CapacityBudget } from '../domain/capacity-budget.js';
import { gpuSplit, type FleetNode, type GpuSplit, type NodeState } from '../domain/fleet.js';
import { ApiError, validationError } from '../domain/errors.js';
import { decodeCursor, encodeCursor, filterDigest } from './cursor.js';
import type { BudgetSource, FleetSource, WorkloadIndex } from './ports.js';

export interface FleetFilters {
  clusterId?: string;
  gpuModel?: string;
  poolId?: string;
  state?: NodeState;
}

/** A node as the API shows it: its split now, and the capacity pool its instance type is in. */
export interface FleetNodeView extends FleetNode, GpuSplit {
  poolId: string | null;
}

export interface FleetNodesResult {
  nodes: FleetNodeView[];
  nextToken: string | null;
  totalCount: number;
}

export interface FleetReadDeps {
  fleet: FleetSource;
  budgets: BudgetSource;
}

/** The pool of an instance type in the organization's budget; null outside every pool. */
export function poolOf(budget: CapacityBudget | undefined, instanceType: string): string | null {
  return budget?.pools.find((pool) => pool.instanceTypes.includes(instanceType))?.poolId ?? null;
}

/**
 * Every node's view, kept while the nodes (the same array: fleet-inventory.ts) and the budget (the
 * same object: a ConfigMap edit makes a new one) stand still, so a page costs its filters and its
 * slice, not 1,250 views.
 */
const kept = new WeakMap<readonly FleetNode[], { budget: CapacityBudget | undefined; views: readonly FleetNodeView[] }>();

function viewsOf(nodes: readonly FleetNode[], budget: CapacityBudget | undefined): readonly FleetNodeView[] {
  const found = kept.get(nodes);
  if (found !== undefined && found.budget === budget) return found.views;
  const views = nodes.map((node) => ({ ...node, ...gpuSplit(node), poolId: poolOf(budget, node.instanceType) }));
  kept.set(nodes, { budget, views });
  return views;
}

/** The organization's GPU nodes that match the filters, with their split and pool. */
export function fleetNodes(deps: FleetReadDeps, scope: Scope, filters: FleetFilters): FleetNodeView[] {
  requireWholeOrganization(scope, 'The fleet');
  const budget = deps.budgets.budgetFor(scope.organizationId);
  return viewsOf(deps.fleet.nodes(scope.organizationId), budget).filter((node) =>
    (filters.clusterId === undefined || node.clusterId === filters.clusterId) &&
    (filters.gpuModel === undefined || node.gpuModel === filters.gpuModel) &&
    (filters.state === undefined || node.state === filters.state) &&
    (filters.poolId === undefined || node.poolId === filters.poolId));
}

const byPosition = (a: readonly [string, string], b: readonly [string, string]): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;

function cursorError(message: string): ApiError {
  return validationError([{ location: 'query', field: 'next_token', message }]);
}

/** The position a cursor carries: [cluster_id, node]. */
function positionOf(text: string): [string, string] | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((part) => typeof part === 'string')) return parsed as [string, string];
  } catch {
    // a token with any other position is not one of these lists'
  }
  return null;
}

export async function listFleetNodes(
  deps: FleetReadDeps & { index: Pick<WorkloadIndex, 'cursorKey'> },
  scope: Scope,
  request: FleetFilters & { limit: number; nextToken?: string },
): Promise<FleetNodesResult> {
  const { limit, nextToken, ...filters } = request;
  const nodes = fleetNodes(deps, scope, filters);
  // The endpoint is part of the digest: a workloads token never pages the nodes.
  const digest = filterDigest({ list: 'fleet/nodes', org: scope.organizationId, ...filters });
  const key = await deps.index.cursorKey();
  let start = 0;
  if (nextToken !== undefined) {
    const decoded = decodeCursor(nextToken, digest, key);
    if (decoded === 'malformed') throw cursorError('is not a token this service issued');
    if (decoded === 'other_filters') throw cursorError('was issued for other filters; repeat the filters of the first page');
    const after = positionOf(decoded.workloadId);
    if (after === null) throw cursorError('is not a token this service issued');
    start = nodes.findIndex((node) => byPosition([node.clusterId, node.name], after) > 0);
    if (start < 0) start = nodes.length;
  }
  const page = nodes.slice(start, start + limit);
  const last = page.at(-1);
  const more = start + limit < nodes.length;
  const position = last === undefined ? null : { submittedAt: 0, workloadId: JSON.stringify([last.clusterId, last.name]) };
  return {
    nodes: page,
    nextToken: more && position !== null ? encodeCursor(position, digest, key) : null,
    totalCount: nodes.length,
  };
}
