// The schema of `prices.yaml` (docs/capacity.md, "Prices"), the one source of truth for the file: the
// parser validates against it and docs/prices.schema.json is generated from it. What JSON Schema cannot
// say (a known ISO 4217 code, whole hours, effective_to after effective_from, no two rates tied for one
// GPU at one time) is checked by prices-file.ts.
import { Type, type Static } from '@sinclair/typebox';
import { CAPACITY_TYPES } from '../domain/capacity-type.js';
import { LABEL_VALUE_PATTERN, POOL_ID_PATTERN } from './capacity-schema.js';

/** An ISO 4217 alphabetic code's shape; prices-file.ts checks it is one the runtime knows. */
export const CURRENCY_PATTERN = '^[A-Z]{3}$';
/** An RFC 3339 time in UTC or with an offset, or a date (midnight UTC); prices-file.ts reads it. */
export const INSTANT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2}))?$';

const Money = (description: string) => Type.Number({ minimum: 0, description });
const Instant = (description: string) => Type.String({ pattern: INSTANT_PATTERN, description });

export const GpuHourRateSchema = Type.Object(
  {
    gpu_model: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'The GPU product as the API\'s `gpu_model` names it (GFD\'s `nvidia.com/gpu.product` without its ' +
        '`-MIG-…` and `-SHARED` suffixes), e.g. `NVIDIA-H100-80GB-HBM3`.',
    })),
    instance_type: Type.Optional(Type.String({
      pattern: LABEL_VALUE_PATTERN,
      description: 'The node\'s instance type, as `instance_type`.',
    })),
    pool_id: Type.Optional(Type.String({ pattern: POOL_ID_PATTERN, description: 'A pool of the organization\'s capacity.yaml.' })),
    cluster_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'A cluster, as the API\'s `cluster_id`.' })),
    capacity_type: Type.Optional(Type.Unsafe<(typeof CAPACITY_TYPES)[number]>({
      type: 'string',
      enum: [...CAPACITY_TYPES],
      description: 'How the node is bought, from its capacity-type label (docs/capacity.md, "Capacity types").',
    })),
    rate_per_gpu_hour: Money('Money per whole-GPU hour, in `currency`: a MIG slice or a time-sliced share costs its share.'),
    effective_from: Instant('When the rate starts to apply: a whole UTC hour, e.g. `2026-10-01T00:00:00Z` or `2026-10-01`.'),
    effective_to: Type.Optional(Instant('When the rate stops (exclusive), a whole UTC hour after effective_from. Default: none.')),
  },
  { additionalProperties: false, description: 'A GPU-hour rate. The rate naming the most fields wins among those that match.' },
);

export const PricesFileSchema = Type.Object(
  {
    organization_id: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Organization the prices belong to. One file per organization.',
    }),
    currency: Type.String({ pattern: CURRENCY_PATTERN, description: 'ISO 4217 code of every amount, e.g. `USD`, `EUR`.' }),
    gpu_hour_rates: Type.Array(GpuHourRateSchema, { minItems: 1, description: 'GPU-hour rates.' }),
    energy_rate_per_kwh: Type.Optional(Money('Money per kWh of GPU energy (as `energy_kwh` measures it). Default: energy is not priced.')),
  },
  {
    additionalProperties: false,
    title: 'gpu-capacity-api prices.yaml',
    description:
      'GPU-hour and energy prices of one organization, read by gpu-capacity-api from the key `prices.yaml` of ConfigMaps labelled ' +
        '`gpucap.io/prices=true` in its namespace. Unknown keys are errors. Checked by the service beyond this schema: the currency is ' +
        'an ISO 4217 code, times are whole UTC hours, effective_to is after effective_from, and no two rates naming as many fields ' +
        'can match one GPU at one time.',
  },
);

export type PricesFile = Static<typeof PricesFileSchema>;
