// GET /v1/chargeback's response (docs/api.md, "Chargeback"). Unlike the cost additions elsewhere, which
// are left out without prices, the statement always has its money fields: null without prices, so a
// finance tool reads one shape whatever the organization.
import { Type } from '@sinclair/typebox';
import { CHARGEBACK_GROUP_KEYS, type ChargebackGroupKey } from '../../query/chargeback.js';
import { CHARGEBACK_MONTH_PATTERN } from '../../query/chargeback-month.js';
import { Nullable, Timestamp } from './primitives.js';

const closed = { additionalProperties: false } as const;

const gpuHours = (description: string) => Type.Number({ minimum: 0, description: `${description} GPU-hours, 4 decimals.` });
const kwh = (description: string) => Type.Number({ minimum: 0, description: `${description} kWh, 4 decimals.` });
const money = (description: string) => Nullable(Type.Number({
  minimum: 0,
  description: `${description} In the currency, rounded to its minor units (see rounding); null without prices.`,
}));
const energyMoney = (description: string) => Nullable(Type.Number({
  minimum: 0,
  description: `${description} Rounded as the other amounts; null without prices or without an energy rate.`,
}));

export const ChargebackRowItem = Type.Object(
  {
    initiative_id: Type.String({ description: 'The team.' }),
    key: Nullable(Type.String({
      description: 'The value of group_by for this row; null without group_by, and for GPU time of no known model or outside every pool.',
    })),
    gpu_hours: gpuHours('Pod GPU time inside the month.'),
    cost: money('gpu_hours × the rate in force when they were used, idle included.'),
    energy_kwh: kwh('The energy of its workloads, spread over their pods\' GPU time, of this month\'s part.'),
    energy_cost: energyMoney('energy_kwh × the energy rate.'),
    idle_gpu_hours: gpuHours('Of gpu_hours, the idle time of its workloads, spread over their pods\' GPU time.'),
    idle_cost: money('Of cost, the idle GPU-hours at the rates of the time they were spread over.'),
    shared_unallocated_cost: money('Its share of the unallocated cost, in proportion to cost; 0 unless share_idle.'),
    total_cost: money('cost + energy_cost + shared_unallocated_cost.'),
  },
  closed,
);

export const Chargeback = Type.Object(
  {
    organization_id: Type.String(),
    month: Type.String({ pattern: CHARGEBACK_MONTH_PATTERN, description: 'The UTC month, as asked.' }),
    from: Timestamp('The month\'s first instant.'),
    to: Timestamp('The next month\'s first instant (exclusive); now while the month is not over.'),
    complete: Type.Boolean({ description: 'false for the current month: its figures still grow.' }),
    currency: Nullable(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code of every amount; null without prices.' })),
    // The enum lists null too: JSON Schema checks `enum` apart from `type`.
    group_by: Type.Unsafe<ChargebackGroupKey | null>({
      type: ['string', 'null'], enum: [...CHARGEBACK_GROUP_KEYS, null], description: 'As asked; null without.',
    }),
    share_idle: Type.Boolean({ description: 'As asked.' }),
    rows: Type.Array(ChargebackRowItem, {
      description: 'One per team, or per team and group: by total_cost descending, then gpu_hours descending, then initiative_id and key.',
    }),
    idle: Type.Object(
      { gpu_hours: gpuHours('Σ rows\' idle_gpu_hours.'), cost: money('Σ rows\' idle_cost: included in their cost, shown apart.') },
      closed,
    ),
    unallocated: Type.Object(
      {
        gpu_hours: gpuHours('The fleet\'s GPU-hours in service that no pod held in the month, as GET /v1/fleet counts them.'),
        cost: money('Those hours at the rates of their nodes\' kind, as GET /v1/fleet prices them.'),
        shared: Type.Boolean({ description: 'Its cost is spread over the rows (share_idle, and some row to carry it).' }),
      },
      closed,
    ),
    total: Type.Object(
      {
        gpu_hours: gpuHours('Σ rows.'),
        cost: money('Σ rows.'),
        energy_kwh: kwh('Σ rows.'),
        energy_cost: energyMoney('Σ rows.'),
        idle_gpu_hours: gpuHours('Σ rows.'),
        idle_cost: money('Σ rows (included in cost).'),
        unallocated_gpu_hours: gpuHours('unallocated.gpu_hours.'),
        unallocated_cost: money('unallocated.cost.'),
        total_cost: money('cost + energy_cost + unallocated_cost: Σ rows\' total_cost, plus unallocated_cost unless shared.'),
      },
      closed,
    ),
    unpriced_gpu_hours: gpuHours('Of the rows\' GPU-hours, those no rate priced (all of them without prices).'),
    rounding: Type.String({ description: 'The rounding rule, in words.' }),
  },
  closed,
);
