// The fleet endpoints' query and response schemas (GET /v1/fleet, GET /v1/fleet/nodes): the
// validator, the handlers' types and the OpenAPI document all come from these.
import { Type, type Static } from '@sinclair/typebox';
import { NODE_STATES } from '../../domain/fleet.js';
import { GPU_SHARING } from '../../domain/gpu-sharing.js';
import { FLEET_GROUP_KEYS } from '../../query/fleet-groups.js';
import { STATS_TIME_RANGES } from '../../query/stats-range.js';
import { TREND_INTERVALS } from '../../domain/trend-interval.js';
import { CurrencyField } from './cost.js';
import { IdParam, Nullable, StringEnum, Timestamp } from './primitives.js';
import { NEXT_TOKEN_PATTERN, WorkloadStatsQuery } from './query.js';

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
    // The range of the statistics, widened to whole clock hours (docs/fleet.md, "History").
    time_range: WorkloadStatsQuery.properties.time_range,
    start_date: WorkloadStatsQuery.properties.start_date,
    end_date: WorkloadStatsQuery.properties.end_date,
    interval: Type.Optional(StringEnum(TREND_INTERVALS, {
      description: 'Adds `series`: the GPU-hours per UTC hour, day or ISO week (from Monday) of the range, every interval ' +
        'at 0 when empty, each with its groups under group_by. At most 744 hours, 1,000 days or 1,000 weeks.',
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

const gpuHours = (description: string) => Type.Number({ minimum: 0, description: `${description} GPU-hours, 4 decimals.` });
const rate = (description: string) => Nullable(Type.Number({ minimum: 0, maximum: 1, description: `${description} 4 decimals.` }));

const hourFields = {
  capacity_gpu_hours: gpuHours('The nodes\' physical GPUs over the time they existed in the range.'),
  unavailable_gpu_hours: gpuHours('Out of service and not allocated.'),
  allocated_gpu_hours: gpuHours('Held by running pods: the workloads\' GPU-hours on these nodes.'),
  idle_gpu_hours: gpuHours('Allocated, and idle by the idle rule (docs/telemetry.md).'),
  unallocated_gpu_hours: gpuHours('capacity − unavailable − allocated.'),
  allocation_rate: rate('allocated ÷ (capacity − unavailable); null when nothing was in service.'),
  utilization_rate: rate('(allocated − idle) ÷ capacity; null without capacity.'),
};

// Additions with the organization's prices only (docs/fleet.md, "Cost"): each row of the history at the
// rate its kind of GPU had in its hour.
const cost = (description: string) => Type.Optional(Type.Number({
  minimum: 0,
  description: `Addition, with prices only: ${description} × the GPU-hour rate in force, rounded to the currency's minor units.`,
}));

const costFields = {
  capacity_cost: cost('capacity_gpu_hours'),
  allocated_cost: cost('allocated_gpu_hours'),
  idle_cost: cost('idle_gpu_hours'),
  unallocated_cost: cost('unallocated_gpu_hours'),
  unpriced_gpu_hours: Type.Optional(gpuHours('Addition, with prices only: capacity no rate matched; no cost counts it.')),
};

export const FleetHours = Type.Object({ ...hourFields, ...costFields }, { ...strict, description: 'GPU-hours over the range.' });

const groupKey = Type.String({ description: 'The group: \'\' for nodes without a model or pool; `cluster_id/node` for a node.' });

export const Fleet = Type.Object(
  {
    currency: CurrencyField,
    time_range: StringEnum(STATS_TIME_RANGES),
    start: Timestamp('Start of the hours summed: the range\'s start, back to its clock hour.'),
    end: Timestamp('End of the hours summed (exclusive): the range\'s end, on to its clock hour.'),
    now: FleetNow,
    summary: FleetHours,
    grouped: Type.Array(
      Type.Object({ key: groupKey, ...nowFields, ...hourFields, ...costFields }, strict),
      {
        description: 'Per group_by, every group with a node now or GPU-hours in the range, by total_gpus descending, ' +
          'then capacity_gpu_hours descending, then key. Σ groups = now and summary.',
      },
    ),
    series: Type.Optional(Type.Array(
      Type.Object(
        {
          start: Timestamp('Start of the interval.'),
          ...hourFields,
          ...costFields,
          grouped: Type.Optional(Type.Array(Type.Object({ key: groupKey, ...hourFields, ...costFields }, strict), {
            description: 'With group_by: the groups with GPU-hours in the interval, by capacity_gpu_hours descending.',
          })),
        },
        strict,
      ),
      { description: 'With `interval`: every interval of the hours summed, by start. Σ series = summary.' },
    )),
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
