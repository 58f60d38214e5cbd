// The schema of `capacity.yaml` (DESIGN "Capacity"), the one source of truth for the file: the parser
// validates against it and docs/capacity.schema.json is generated from it (npm run docs:capacity-schema).
// What JSON Schema cannot say (ids unique across items, an instance type in one pool only, a namespace
// under one initiative only, names defaulting to ids) is checked by capacity-file.ts.
import { Type, type Static, type TUnsafe } from '@sinclair/typebox';
import type { BudgetPeriod } from '../domain/capacity-budget.js';

export const BUDGET_PERIODS = ['month', 'quarter', 'year', 'total'] as const satisfies readonly BudgetPeriod[];

/** Pool ids: letters, digits, `.`, `_`, `-`; at most 63, starting with a letter or digit. */
export const POOL_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$';
/** A non-empty Kubernetes label value: initiative ids and instance types are read from labels. */
export const LABEL_VALUE_PATTERN = '^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
/** A Kubernetes namespace name (RFC 1123 label). */
export const NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';

/** What each pattern allows, in words, for validation messages. */
export const CAPACITY_PATTERN_WORDS: Readonly<Record<string, string>> = {
  [POOL_ID_PATTERN]: 'letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit)',
  [LABEL_VALUE_PATTERN]: 'a Kubernetes label value: letters, digits, "-", "_" or ' +
    '"." (at most 63, starting and ending with a letter or digit)',
  [NAMESPACE_PATTERN]: 'a Kubernetes namespace name: lowercase letters, digits and ' +
    '"-" (at most 63, starting and ending with a letter or digit)',
};

// A plain `enum` (not a union of literals) so a validation error can list the allowed values.
const Period: TUnsafe<BudgetPeriod> = Type.Unsafe<BudgetPeriod>({
  type: 'string',
  enum: [...BUDGET_PERIODS],
  default: 'month',
  description:
    'Budget period: GPU-hours used are counted from the start of the ' +
      'current calendar month, quarter or year (UTC), or since ever (`total`).',
});

const GpuHours = (description: string) => Type.Number({ minimum: 0, description });
const Cost = (what: string) =>
  Type.Optional(Type.Number({
    minimum: 0,
    description: `Money allocated to ${what} per period, in the currency of the organization's prices.yaml, beside its GPU-hours ` +
      '(docs/capacity.md, "Budgets in money"). Default: none.',
  }));
const DisplayName = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }));

export const CapacityPoolSchema = Type.Object(
  {
    pool_id: Type.String({
      pattern: POOL_ID_PATTERN,
      description: 'Id of the pool, unique in the file (the API\'s `pool_id`). Letters, ' +
        'digits, `.`, `_`, `-`; at most 63 characters, starting with a letter or digit.',
    }),
    name: DisplayName('Display name of the pool. Default: `pool_id`.'),
    allocated_gpu_hours: GpuHours('GPU-hours allocated to the pool per period.'),
    allocated_cost: Cost('the pool'),
    instance_types: Type.Array(
      Type.String({
        pattern: LABEL_VALUE_PATTERN,
        description: 'An instance type, as in the node label `node.kubernetes.io/instance-type` ' +
          '(or the GPU product label when that is absent).',
      }),
      {
        minItems: 1,
        uniqueItems: true,
        description: 'Instance types whose GPU-hours count against the pool. An instance type belongs to at most one pool of the file.',
      },
    ),
  },
  { additionalProperties: false, description: 'A capacity pool: GPU-hours of a set of instance types.' },
);

export const CapacityInitiativeSchema = Type.Object(
  {
    initiative_id: Type.String({
      pattern: LABEL_VALUE_PATTERN,
      description: 'Id of the initiative (team), unique in the file: the value of the initiative label (`gpucap.io/initiative` ' +
        'unless configured otherwise), or the namespace name when a workload carries no such label. At most 63 characters.',
    }),
    name: DisplayName('Display name of the initiative. Default: `initiative_id`.'),
    allocated_gpu_hours: GpuHours('GPU-hours allocated to the initiative per period.'),
    allocated_cost: Cost('the initiative'),
    namespaces: Type.Optional(
      Type.Array(Type.String({ pattern: NAMESPACE_PATTERN, description: 'A Kubernetes namespace name.' }), {
        default: [],
        uniqueItems: true,
        description: 'Namespaces that belong to the initiative. A namespace belongs to at most one initiative of the file. Default: none.',
      }),
    ),
  },
  { additionalProperties: false, description: 'An initiative (team) and its GPU-hour budget.' },
);

export const CapacityFileSchema = Type.Object(
  {
    organization_id: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Organization the budget belongs to (the `org_id` of its callers). One file per organization.',
    }),
    period: Type.Optional(Period),
    allocated_gpu_hours: GpuHours('GPU-hours allocated to the whole organization per period.'),
    allocated_cost: Cost('the whole organization'),
    pools: Type.Optional(
      Type.Array(CapacityPoolSchema, {
        default: [],
        description: 'Capacity pools, by instance type. Their allocations may add ' +
          'up to more than the organization\'s (overcommit). Default: none.',
      }),
    ),
    initiatives: Type.Optional(
      Type.Array(CapacityInitiativeSchema, {
        default: [],
        description: 'Initiatives (teams) with a budget of their own. Their allocations ' +
          'may add up to more than the organization\'s (overcommit). Default: none.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'gpu-capacity-api capacity.yaml',
    description:
      'GPU-hour budget of one organization, read by gpu-capacity-api from the key `capacity.yaml` of ConfigMaps labelled ' +
        '`gpucap.io/capacity=true` in its namespace. Unknown keys are errors. Checked by the service beyond this schema: ' +
        '`pool_id` and `initiative_id` are unique, an instance type is listed in one pool only, a namespace under one initiative only.',
  },
);

/** The file as written; `period`, `pools`, `initiatives` and `namespaces` are filled from their defaults. */
export type CapacityFile = Static<typeof CapacityFileSchema>;
