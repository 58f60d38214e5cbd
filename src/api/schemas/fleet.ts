// The fleet endpoints' query and response schemas (GET /v1/fleet, GET /v1/fleet/nodes): the
// validator, the handlers' types and the OpenAPI document all come from these.
import { Type, type Static } from '@sinclair/typebox';
import { NODE_STATES } from '../../domain/fleet.js';
import { GPU_SHARING } from '../../domain/gpu-sharing.js';
import { FLEET_GROUP_KEYS } from '../../query/fleet.js';
import { IdParam, Nullable, StringEnum } from './primitives.js';
import { NEXT_TOKEN_PATTERN } from './query.js';

const strict = { additionalProperties: false } as const;

const filters = {
  cluster_id: Type.Optional(IdParam('Only the nodes of this cluster.')),
  gpu_model: Type.Optional(IdParam('Only the nodes of this GPU model (as gpu_model of the nodes).')),
  pool_id: Type.Optional(IdParam('Only the nodes whose instance type is in this capacity pool.')),
};

export const FleetQuery = Type.Object(
  {
    ...filters,
    group_by: Type.Optional(StringEnum(FLEET_GROUP_KEYS, {
      description: 'Fill `grouped`; omitted: `grouped` is `[]`. `node` groups are keyed `cluster_id/node`.',
    })),
  },
  strict,
);
export type FleetQuery = Static<typeof FleetQuery>;

export const FleetNodesQuery = Type.Object(
  {
    ...filters,
    state: Type.Optional(StringEnum(NODE_STATES, { description: 'Only the nodes in this state.' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Page size.' }),
    next_token: Type.Optional(
      Type.String({
        pattern: NEXT_TOKEN_PATTERN,
        description: 'Opaque, issued by the service: metadata.next_token of the previous page, sent back unchanged with the same ' +
          'filters. A token the service did not issue, or one sent with other filters, is VALIDATION_ERROR.',
      }),
    ),
  },
  strict,
);
export type FleetNodesQuery = Static<typeof FleetNodesQuery>;

const gpus = (description: string) => Type.Number({ minimum: 0, description: `${description} Whole-GPU equivalents, 4 decimals.` });

const nowFields = {
  total_gpus: gpus('Physical GPUs of the nodes, each counted once whatever its sharing mode.'),
  allocated_gpus: gpus('GPUs held by running pods (at most each node\'s GPUs).'),
  unallocated_gpus: gpus('GPUs free to schedule: total − allocated − unavailable.'),
  unavailable_gpus: gpus('GPUs out of service and not allocated: every free GPU of a cordoned or not ready node, ' +
    'and the unhealthy free GPUs of a ready one.'),
  nodes: Type.Integer({ minimum: 0, description: 'GPU nodes.' }),
  nodes_unavailable: Type.Integer({ minimum: 0, description: 'GPU nodes cordoned or not ready.' }),
};

export const FleetNow = Type.Object(nowFields, { ...strict, description: 'The GPUs now.' });

export const Fleet = Type.Object(
  {
    now: FleetNow,
    grouped: Type.Array(
      Type.Object({ key: Type.String({ description: 'The group: \'\' for nodes without a model or pool.' }), ...nowFields }, strict),
      { description: 'Per group_by, by total_gpus descending then key.' },
    ),
  },
  strict,
);

export const FleetNodeItem = Type.Object(
  {
    cluster_id: Type.String(),
    node: Type.String({ description: 'The Node\'s name.' }),
    gpu_model: Nullable(Type.String({
      description: 'GFD\'s nvidia.com/gpu.product without its suffixes, or the DRA devices\' productName; null when the node does not say.',
    })),
    instance_type: Type.String({
      description: 'The node\'s instance-type label, else its GPU product label, else `unknown` (as instance_type of workloads).',
    }),
    pool_id: Nullable(Type.String({ description: 'The capacity pool its instance type is in; null outside every pool.' })),
    state: StringEnum(NODE_STATES, {
      description: '`cordoned`: spec.unschedulable; `not_ready`: its Ready condition is not True (it wins over cordoned).',
    }),
    gpu_sharing: StringEnum(GPU_SHARING, { description: 'How the node hands out its GPUs (as gpu_sharing of workloads).' }),
    total_gpus: gpus('Its physical GPUs.'),
    allocated_gpus: gpus('Held by its running pods.'),
    unallocated_gpus: gpus('Free to schedule.'),
    unavailable_gpus: gpus('Out of service and not allocated.'),
    unhealthy_gpus: gpus('GPUs the device plugin took out of allocatable (capacity − allocatable).'),
  },
  strict,
);
