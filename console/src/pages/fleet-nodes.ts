// The fleet's GPU nodes (GET /v1/fleet/nodes) as a table, page by page. A node out of service is what
// an admin comes here for, so each node's state is a badge of its own colour, and unhealthy GPUs stand out.
import type { FleetNode, FleetNodeState, ListMetadata } from '../contract.js';
import { h, table, type Child } from '../dom.js';
import { formatNumber } from '../format.js';
import { withCursor } from '../router.js';
import { link } from '../ui.js';

const HEAD = [
  ...['Cluster', 'Node', 'State', 'GPU model', 'Instance type', 'Pool', 'Sharing'],
  ...['GPUs', 'Allocated', 'Unallocated', 'Unavailable', 'Unhealthy'],
];

/** `not_ready` → `not ready`. */
export function nodeStateLabel(state: FleetNodeState): string {
  return state.replace('_', ' ');
}

function stateBadge(state: FleetNodeState): HTMLElement {
  return h('span', { class: `badge badge-node-${state}` }, nodeStateLabel(state));
}

function unhealthy(gpus: number): Child {
  return gpus > 0 ? h('strong', { class: 'unhealthy' }, formatNumber(gpus, 2)) : '0';
}

export function nodesView(nodes: readonly FleetNode[], metadata: ListMetadata | undefined, query: URLSearchParams): Child[] {
  const total = metadata?.total_count ?? nodes.length;
  const next = metadata?.next_token;
  const gpus = (value: number) => formatNumber(value, 2);
  const state = query.get('state') ?? '';
  const inState = state === '' ? '' : ` ${nodeStateLabel(state as FleetNodeState)}`;
  return [
    table(
      `${total} GPU node${total === 1 ? '' : 's'}${inState}${query.has('next_token') ? ' (a later page)' : ''}`,
      HEAD,
      nodes.map((n) => [
        n.cluster_id,
        n.node,
        stateBadge(n.state),
        n.gpu_model ?? '—',
        n.instance_type,
        n.pool_id ?? 'none',
        n.gpu_sharing.replace('_', ' '),
        gpus(n.total_gpus),
        gpus(n.allocated_gpus),
        gpus(n.unallocated_gpus),
        gpus(n.unavailable_gpus),
        unhealthy(n.unhealthy_gpus),
      ]),
      { class: 'nodes', 'data-rows': nodes.length },
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages of nodes' },
      query.has('next_token') ? link(`/fleet${withCursor(query, undefined)}`, 'First page') : null,
      next === undefined ? h('span', { class: 'muted' }, 'Last page') : link(`/fleet${withCursor(query, next)}`, 'Next page'),
    ),
  ];
}
