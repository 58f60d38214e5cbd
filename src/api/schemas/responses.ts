// Response shapes of seed-api.md section 2, as JSON Schema: served in /v1/openapi.json and used by
// the tests to check every response field for field.
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../../domain/errors.js';
import { GPU_SHARING, type GpuSharing } from '../../domain/gpu-sharing.js';
import { FAILURE_REASONS, type FailureReason } from '../../domain/failure-reason.js';
import { METRIC_NAMES, RANKING_SORT_KEYS } from '../../domain/metrics.js';
import { PERCENTILES, percentileKey } from '../../domain/percentiles.js';
import { WORKLOAD_STATUSES } from '../../domain/workload.js';
import { HEALTH_CHECK_STATES } from '../health-checks.js';
import { budgetCostFields, CurrencyField, statsCostFields, workloadCostFields } from './cost.js';
import { Nullable, StringEnum, Timestamp } from './primitives.js';

const closed = { additionalProperties: false } as const;

const listItemFields = {
  workload_id: Type.String({ description: 'Kubernetes UID of the Job or Pod.' }),
  name: Type.String(),
  status: StringEnum(WORKLOAD_STATUSES),
  submitted_by: Type.String({ description: '`unknown` when the object names no submitter.' }),
  initiative_id: Type.String({
    description: 'gpucap.io/initiative label of the object, else of its namespace, else the initiative ' +
      'whose namespaces list it in the organization\'s capacity budget, else the namespace name.',
  }),
  instance_type: Type.String({ description: '`unknown` before the workload is scheduled on a labelled node.' }),
  gpu_count: Type.Integer({
    minimum: 0,
    description: 'GPUs requested (nvidia.com/gpu and MIG resources; per pod: max(largest ' +
      'init container, sum of containers)), and the GPU devices of its DRA claims, one each; Jobs: per-pod request × parallelism.',
  }),
  submitted_at: Timestamp('Creation time of the object.'),
  started_at: Nullable(Timestamp('When the first pod started; null until then.')),
};

// An addition: why a failed or cancelled workload did not complete (docs/workloads.md); null otherwise.
// The enum lists null too: JSON Schema checks `enum` apart from `type`.
const FailureReasonValue = Type.Unsafe<FailureReason | null>({
  type: ['string', 'null'],
  enum: [...FAILURE_REASONS, null],
  description: 'Addition: why it failed or was cancelled; null for every other ' +
    'status (and, in statistics, for the group of workloads without one).',
});

// An addition: how a workload's GPUs were shared; the enum lists null too, as FailureReasonValue's.
const GpuSharingValue = Type.Unsafe<GpuSharing | null>({
  type: ['string', 'null'],
  enum: [...GPU_SHARING, null],
  description: 'Addition: how its GPUs were shared (docs/workloads.md, "How GPUs are counted"); null for ' +
    'workloads indexed before shares were counted.',
});

// An addition: the group of workloads of one GPU model (group_by=gpu_model); null for those of no known model.
const GpuModelGroup = Nullable(Type.String({
  description: 'Addition: the GPU model of the group (as the full record\'s gpu_model); null for the workloads of no known model.',
}));

export const WorkloadListItem = Type.Object(listItemFields, { ...closed, $id: 'WorkloadListItem' });

export const Workload = Type.Object(
  {
    ...listItemFields,
    completed_at: Nullable(Timestamp('Completion, failure or cancellation time; null until terminal.')),
    duration_seconds: Type.Integer({ minimum: 0, description: '(completed_at or now) − started_at; 0 before start.' }),
    gpu_hours_used: Type.Number({
      minimum: 0,
      description: 'Σ over pods of GPUs × running seconds / 3600, current while running; GPUs in whole-GPU ' +
        'equivalents (a pod\'s share of each device, as allocated_gpus; docs/workloads.md, "How GPUs are counted").',
    }),
    exit_code: Nullable(
      Type.Integer({ description: 'First non-zero container exit code of the last terminated pod, else 0; null until terminal.' }),
    ),
    is_managed: Type.Boolean({
      description: 'gpucap.io/managed label when present, else true for Kueue-queued objects (kueue.x-k8s.io/queue-name), else false.',
    }),
    cluster_id: Type.String({ description: 'The cluster\'s configured id (`local` for the home cluster by default).' }),
    namespace: Type.String({ description: 'Kubernetes namespace of the Job or Pod.' }),
    queue_seconds: Type.Integer({
      minimum: 0,
      description: 'Addition: (started_at, else completed_at for one that ended unstarted, else now) − submitted_at.',
    }),
    failure_reason: FailureReasonValue,
    allocated_gpus: Type.Number({
      minimum: 0,
      description: 'Addition: the GPUs held in whole-GPU equivalents (gpu_count × the share of each device: a ' +
        '1g.10gb MIG slice of an H100 is 1/7, one of 4 time-sliced replicas 1/4, a KAI fraction its value), on ' +
        'the gpu_hours_basis setting; gpu_count for workloads indexed before shares were counted. 4 decimals.',
    }),
    gpu_sharing: GpuSharingValue,
    gpu_model: Nullable(Type.String({
      description: 'Addition: the GPU product, as GPU feature discovery\'s nvidia.com/gpu.product without its ' +
        '-MIG-… and -SHARED suffixes, or a DRA device\'s productName; null when unknown.',
    })),
    ...usageFields(''),
    ...workloadCostFields,
  },
  { ...closed, $id: 'Workload' },
);

// Additions (docs/api.md "GPU usage"): what the GPUs did, from the samples attributed to the
// workloads; sums are named `total_…` in the statistics' summary, as its other sums are.
function usageFields(sum: '' | 'total_') {
  const coverage = (what: string) => Type.Number({
    minimum: 0,
    maximum: 1,
    description: `Addition: GPU-time with a ${what} sample / GPU-time (gpu_hours), capped at 1.`,
  });
  return {
    [`${sum}idle_gpu_hours`]: Nullable(
      Type.Number({
        minimum: 0,
        description: 'Addition: GPU-hours of the one-minute buckets whose mean gpu_utilization ' +
          'was below idle_threshold_percent; null without a utilization sample.',
      }),
    ),
    gpu_efficiency: Nullable(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'Addition: gpu_utilization weighted by GPU-time, as a share; null without a utilization sample.',
      }),
    ),
    utilization_coverage: coverage('utilization'),
    [`${sum}energy_kwh`]: Nullable(
      Type.Number({
        minimum: 0,
        description: 'Addition: ∫ power_usage over the GPUs and their time, in kWh; null without a power sample (always for MIG slices).',
      }),
    ),
    energy_coverage: coverage('power'),
  };
}
const USAGE_FIELD_COUNT = 5;

const StatsFigures = {
  workload_count: Type.Integer({ minimum: 0 }),
  gpu_hours: Type.Number({ minimum: 0 }),
  success_rate: Type.Number({ minimum: 0, maximum: 1, description: 'completed / (completed + failed); 0 when none.' }),
  average_queue_seconds: Type.Number({
    minimum: 0,
    description: 'Addition: mean wait from submitted_at to started_at of every workload ' +
      'counted (to completed_at if it ended unstarted, to now while pending); 0 when none.',
  }),
};

// Present only when asked for (`queue_percentiles`), so an answer without them is unchanged. A group
// always counts a workload; a summary may count none, and its percentiles are then null.
const queuePercentileFields = (nullable: boolean) =>
  Object.fromEntries(
    PERCENTILES.map((p) => {
      const value = Type.Integer({
        minimum: 0,
        description: `Addition, present when \`queue_percentiles\` names ${p}: the nearest-rank ${p}th percentile of ` +
          `queue_seconds over the workloads counted (one of their queue_seconds)${nullable ? '; null when none' : ''}.`,
      });
      return [`${percentileKey(p)}_queue_seconds`, Type.Optional(nullable ? Nullable(value) : value)];
    }),
  );

/** A group: its group_by field, the figures and the usage figures. */
const GROUP_FIELD_COUNT = 1 + Object.keys(StatsFigures).length + USAGE_FIELD_COUNT;
const STATS_COST_FIELD_COUNT = Object.keys(statsCostFields('')).length;

export const WorkloadStats = Type.Object(
  {
    currency: CurrencyField,
    summary: Type.Object(
      {
        total_workloads: Type.Integer({ minimum: 0 }),
        total_gpu_hours: Type.Number({ minimum: 0 }),
        average_duration_seconds: Type.Number({ minimum: 0, description: 'Over workloads that started.' }),
        success_rate: StatsFigures.success_rate,
        average_queue_seconds: StatsFigures.average_queue_seconds,
        ...queuePercentileFields(true),
        ...usageFields('total_'),
        ...statsCostFields('total_'),
      },
      closed,
    ),
    grouped: Type.Array(
      Type.Object(
        {
          submitted_by: Type.Optional(Type.String()),
          initiative_id: Type.Optional(Type.String()),
          instance_type: Type.Optional(Type.String()),
          failure_reason: Type.Optional(FailureReasonValue),
          gpu_model: Type.Optional(GpuModelGroup),
          ...StatsFigures,
          ...queuePercentileFields(false),
          ...usageFields(''),
          ...statsCostFields(''),
        },
        {
          ...closed,
          minProperties: GROUP_FIELD_COUNT,
          maxProperties: GROUP_FIELD_COUNT + PERCENTILES.length + STATS_COST_FIELD_COUNT,
          description: 'The group_by field plus the figures; sorted by gpu_hours descending.',
        },
      ),
    ),
    series: Type.Optional(
      Type.Array(
        Type.Object(
          {
            start: Timestamp('Start of the interval.'),
            submitted_by: Type.Optional(Type.String()),
            initiative_id: Type.Optional(Type.String()),
            instance_type: Type.Optional(Type.String()),
            failure_reason: Type.Optional(FailureReasonValue),
            gpu_model: Type.Optional(GpuModelGroup),
            ...StatsFigures,
            ...usageFields(''),
            ...statsCostFields(''),
          },
          {
            ...closed,
            description: 'The figures of the workloads submitted in the interval (and the group); with group_by, one per non-empty pair.',
          },
        ),
        {
          description: 'Addition, present with `interval`: by start, then as `grouped`. Without ' +
            'group_by every interval of the range appears, empty ones at 0; Σ series = summary.',
        },
      ),
    ),
  },
  { ...closed, $id: 'WorkloadStats' },
);

const MetricValue = Nullable(Type.Number());
// Present only when asked for (`percentiles`), so an answer without them is the contract's four fields.
const percentileFields = Object.fromEntries(
  PERCENTILES.map((p) => [
    percentileKey(p),
    Type.Optional(
      Nullable(Type.Number({ description: `Addition, present when \`percentiles\` names ${p}: the nearest-rank ${p}th percentile.` })),
    ),
  ]),
);
export const MetricSummary = Type.Object(
  { avg: MetricValue, min: MetricValue, max: MetricValue, current: MetricValue, ...percentileFields },
  { ...closed, $id: 'MetricSummary', description: 'All null when there are no samples in the range.' },
);

export const WorkloadMetrics = Type.Object(
  {
    workload_id: Type.String(),
    time_range: Type.String(),
    metrics: Type.Object(Object.fromEntries(METRIC_NAMES.map((m) => [m, Type.Optional(Type.Ref(MetricSummary))])), closed),
  },
  { ...closed, $id: 'WorkloadMetrics' },
);

const RankedValue = Type.Object({ avg: Type.Number(), current: Type.Number() }, closed);
const RankedTotal = Type.Object({ total: Type.Number({ minimum: 0 }) }, closed);
// An addition: the workload's queue_seconds, whole seconds as GET /v1/workloads/{id} shows it.
const RankedQueue = Type.Object({ total: Type.Integer({ minimum: 0 }) }, closed);
// Additions: lifetime usage, and the share of the workload's GPU-time its samples cover.
const RankedCoverage = Type.Number({ minimum: 0, maximum: 1 });
const RankedUsage = {
  idle_gpu_hours: Type.Object({ total: Type.Number({ minimum: 0 }), coverage: RankedCoverage }, closed),
  gpu_efficiency: Type.Object({ value: Type.Number({ minimum: 0, maximum: 1 }), coverage: RankedCoverage }, closed),
};
export const RankedWorkloads = Type.Object(
  {
    currency: CurrencyField,
    workloads: Type.Array(
      Type.Object(
        {
          workload_id: Type.String(),
          name: Type.String(),
          initiative_id: Type.String(),
          ...Object.fromEntries(
            RANKING_SORT_KEYS.map((k) => [
              k,
              Type.Optional(
                k === 'idle_gpu_hours' || k === 'gpu_efficiency'
                  ? RankedUsage[k]
                  : k === 'gpu_hours' || k === 'cost' ? RankedTotal : k === 'queue_seconds' ? RankedQueue : RankedValue,
              ),
            ]),
          ),
        },
        {
          ...closed,
          minProperties: 4,
          maxProperties: 4,
          description: 'Holds the sort_by metric only: {avg, current}, or {total} for gpu_hours, queue_seconds and cost.',
        },
      ),
    ),
    scope_average: Type.Object(Object.fromEntries(RANKING_SORT_KEYS.map((k) => [k, Type.Optional(Nullable(Type.Number()))])), {
      ...closed,
      minProperties: 1,
      maxProperties: 1,
      description: 'Keyed by sort_by; null when nothing in scope has a value.',
    }),
  },
  { ...closed, $id: 'RankedWorkloads' },
);

// Additions to the contract (docs/api.md "Capacity"): where each budget is heading at its recent pace.
const Forecast = {
  burn_rate_gpu_hours_per_day: Type.Number({ minimum: 0, description: 'GPU-hours used in the trailing 7 days, per day.' }),
  projected_used_gpu_hours_at_period_end: Nullable(
    Type.Number({ minimum: 0, description: 'used + burn rate × days left in the period; null for the `total` period.' }),
  ),
  projected_exhaustion_at: Nullable(
    Timestamp('When remaining reaches 0 at the burn rate; the time of reading when ' +
      'already spent; null when not expected within the period, or without a budget.'),
  ),
};
const Budget = {
  allocated_gpu_hours: Type.Number(),
  used_gpu_hours: Type.Number({ minimum: 0 }),
  remaining_gpu_hours: Type.Number({ description: 'allocated − used; negative when overspent.' }),
  ...Forecast,
};
export const Capacity = Type.Object(
  {
    organization_id: Type.String(),
    currency: CurrencyField,
    summary: Type.Object(
      {
        total_allocated_gpu_hours: Type.Number(),
        total_used_gpu_hours: Type.Number({ minimum: 0 }),
        total_remaining_gpu_hours: Type.Number(),
        current_active_gpus: Type.Integer({ minimum: 0, description: 'Σ gpu_count of running workloads in the caller\'s scope.' }),
        ...Forecast,
        ...budgetCostFields('total_'),
      },
      closed,
    ),
    pools: Type.Array(
      Type.Object(
        {
          pool_id: Type.String(),
          name: Type.String(),
          ...Budget,
          instance_types: Type.Array(Type.String()),
          capacity_gpu_hours_in_period: Nullable(Type.Number({
            minimum: 0,
            description: 'Addition: the physical GPU-hours of the pool\'s nodes over the whole period, as if today\'s nodes ' +
              'stayed (docs/fleet.md); null for the period `total`, which has no end, or while the service sees no GPU ' +
              'node of the organization.',
          })),
          over_committed: Type.Boolean({ description: 'Addition: allocated_gpu_hours > capacity_gpu_hours_in_period.' }),
          ...budgetCostFields(''),
        },
        closed,
      ),
    ),
    initiatives: Type.Array(Type.Object({ initiative_id: Type.String(), name: Type.String(), ...Budget, ...budgetCostFields('') }, closed)),
  },
  { ...closed, $id: 'Capacity' },
);

export const HealthCheck = Type.Object(
  {
    name: Type.String({ description: '`index`, `cluster/<cluster_id>`, `exporters` or `budgets`.' }),
    status: StringEnum(HEALTH_CHECK_STATES, {
      description: '`ok`; `degraded` while the source fails (what it gave last is still served); `pending` until it is read once.',
    }),
  },
  closed,
);

export const Health = Type.Object(
  {
    status: StringEnum(['healthy', 'unhealthy'] as const, {
      description: '`healthy` whenever the service answers from its index, even while a source fails.',
    }),
    version: Type.String(),
    timestamp: Timestamp('When the check ran.'),
    checks: Type.Array(HealthCheck, {
      description: 'One entry per source, in this order: the index, each cluster, the exporters, the budgets.',
    }),
  },
  { ...closed, $id: 'Health' },
);

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        code: StringEnum(Object.keys(ERROR_STATUS) as ErrorCode[]),
        message: Type.String(),
        details: Type.Array(
          Type.Object({ location: StringEnum(['query', 'path', 'header'] as const), field: Type.String(), message: Type.String() }, closed),
        ),
      },
      closed,
    ),
    request_id: Type.String(),
  },
  { ...closed, $id: 'ErrorBody' },
);

/** The success envelope around a data schema (seed-api.md section 2). */
export function Envelope(data: TSchema, metadata?: TSchema) {
  return Type.Object({ data, ...(metadata ? { metadata } : {}), request_id: Type.String() }, closed);
}

export const ListMetadata = Type.Object(
  {
    next_token: Type.Optional(Type.String({ description: 'Opaque cursor of the next page; absent on the last page.' })),
    total_count: Type.Integer({ minimum: 0 }),
  },
  closed,
);
export const CountMetadata = Type.Object({ total_count: Type.Integer({ minimum: 0 }) }, closed);
