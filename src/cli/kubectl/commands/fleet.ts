// kubectl gpucap fleet: the organization's GPUs now, whole and by group (model by default);
// kubectl gpucap nodes: its GPU nodes, every page, with their state and split. ORG_ADMIN only, as the API.
import type { ApiClient } from '../api-client.js';
import type { View } from '../output/formats.js';
import { share, text } from '../output/units.js';

interface NowFigures {
  total_gpus: number;
  allocated_gpus: number;
  unallocated_gpus: number;
  unavailable_gpus: number;
  nodes: number;
  nodes_unavailable: number;
}
interface FleetBody {
  data: { now: NowFigures; grouped: (NowFigures & { key: string })[] };
}
interface NodeItem {
  cluster_id: string;
  node: string;
  gpu_model: string | null;
  instance_type: string;
  pool_id: string | null;
  state: string;
  gpu_sharing: string;
  total_gpus: number;
  allocated_gpus: number;
  unallocated_gpus: number;
  unavailable_gpus: number;
  unhealthy_gpus: number;
}
interface NodesBody {
  data: { nodes: NodeItem[] };
  metadata: { next_token?: string; total_count: number };
}

/** The csv columns of the nodes: the API's fields, in its order. */
const NODE_FIELDS = [
  'cluster_id', 'node', 'gpu_model', 'instance_type', 'pool_id', 'state', 'gpu_sharing',
  'total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus', 'unhealthy_gpus',
] as const satisfies readonly (keyof NodeItem)[];

export const FLEET_GROUPS = { model: 'gpu_model', pool: 'pool_id', cluster: 'cluster_id', node: 'node' } as const;
export type FleetGroupName = keyof typeof FLEET_GROUPS;

type FleetRow = NowFigures & { group: string };

/** allocated ÷ (total − unavailable): how much of what can be handed out is. */
const allocationRate = (r: FleetRow): string =>
  (r.total_gpus > r.unavailable_gpus ? share(r.allocated_gpus / (r.total_gpus - r.unavailable_gpus)) : '-');

/** GPUs as the table shows them: whole ones plainly, fractions (a MIG slice, a replica) to two decimals. */
const gpus = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(2));

const FIGURE_FIELDS = ['total_gpus', 'allocated_gpus', 'unallocated_gpus', 'unavailable_gpus'] as const;

export async function fleetView(client: ApiClient, options: { by: FleetGroupName }): Promise<View<FleetRow>> {
  const body: FleetBody = await client.get('/v1/fleet', { group_by: FLEET_GROUPS[options.by] });
  const groups = body.data.grouped.map(({ key, ...figures }) => ({ group: key, ...figures }));
  const rows: FleetRow[] = [{ group: 'all', ...body.data.now }, ...groups];
  return {
    data: body.data,
    rows,
    columns: [
      { header: options.by.toUpperCase(), cell: (r) => text(r.group), shrink: true },
      { header: 'GPUS', cell: (r) => gpus(r.total_gpus), align: 'right' },
      { header: 'ALLOCATED', cell: (r) => gpus(r.allocated_gpus), align: 'right' },
      { header: 'FREE', cell: (r) => gpus(r.unallocated_gpus), align: 'right' },
      { header: 'UNAVAILABLE', cell: (r) => gpus(r.unavailable_gpus), align: 'right' },
      { header: 'ALLOC %', cell: allocationRate, align: 'right' },
      { header: 'NODES', cell: (r) => `${r.nodes - r.nodes_unavailable}/${r.nodes}`, align: 'right' },
    ],
    fields: [
      ['group', (r) => r.group],
      ...FIGURE_FIELDS.map((field) => [field, (r: FleetRow) => r[field]] as const),
      ['nodes', (r) => r.nodes],
      ['nodes_unavailable', (r) => r.nodes_unavailable],
    ],
  };
}

export async function nodesView(
  client: ApiClient,
  options: { cluster?: string; model?: string; pool?: string; state?: string },
): Promise<View<NodeItem>> {
  const nodes: NodeItem[] = [];
  let token: string | undefined;
  do {
    const page: NodesBody = await client.get('/v1/fleet/nodes', {
      cluster_id: options.cluster, gpu_model: options.model, pool_id: options.pool, state: options.state, limit: '1000', next_token: token,
    });
    nodes.push(...page.data.nodes);
    token = page.metadata.next_token;
  } while (token !== undefined);
  return {
    data: { nodes, total_count: nodes.length },
    rows: nodes,
    columns: [
      { header: 'NODE', cell: (n) => `${n.cluster_id}/${n.node}`, shrink: true },
      { header: 'MODEL', cell: (n) => text(n.gpu_model), shrink: true },
      { header: 'STATE', cell: (n) => n.state },
      { header: 'GPUS', cell: (n) => gpus(n.total_gpus), align: 'right' },
      { header: 'ALLOCATED', cell: (n) => gpus(n.allocated_gpus), align: 'right' },
      { header: 'FREE', cell: (n) => gpus(n.unallocated_gpus), align: 'right' },
      { header: 'UNHEALTHY', cell: (n) => gpus(n.unhealthy_gpus), align: 'right' },
      { header: 'POOL', cell: (n) => text(n.pool_id) },
    ],
    fields: NODE_FIELDS.map((field) => [field, (n: NodeItem) => n[field]] as const),
  };
}
