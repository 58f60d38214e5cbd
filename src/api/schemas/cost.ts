// Cost fields (docs/api.md, "Cost"): present only in the answers of an organization with prices
// (docs/capacity.md, "Prices"), so an organization without them gets exactly the answers it had.
import { Type } from '@sinclair/typebox';
import { Nullable } from './primitives.js';

export const CurrencyField = Type.Optional(Type.String({
  pattern: '^[A-Z]{3}$',
  description: 'Addition, with prices only: the ISO 4217 currency of every cost of the answer.',
}));

const Money = (description: string) => Type.Number({ minimum: 0, description: `Addition, with prices only: ${description}` });

/** A workload's own cost. */
export const workloadCostFields = {
  currency: CurrencyField,
  cost: Type.Optional(Nullable(Money(
    'its pods\' GPU time × the GPU-hour rate in force while they ran (split where a rate changes), rounded to the ' +
      'currency\'s minor units; null when it used GPU time and no rate matched any of it.',
  ))),
  energy_cost: Type.Optional(Nullable(Money('energy_kwh × the energy rate; null when energy is not priced or none was measured.'))),
  unpriced_gpu_hours: Type.Optional(Money('GPU-hours of it that no rate matched (4 decimals); 0 when all were priced.')),
};

/** A budget entry's figures in money (docs/api.md, "Capacity"), `total_`-prefixed in the summary. */
export function budgetCostFields(sum: '' | 'total_') {
  const money = (description: string) => Type.Optional(Money(description));
  const nullableMoney = (description: string) => Type.Optional(Nullable(Money(description)));
  return {
    [`${sum}allocated_cost`]: nullableMoney('allocated_cost of capacity.yaml; null when the budget states none.'),
    [`${sum}used_cost`]: money('the cost of the GPU time counted in used_gpu_hours, at the rates in force while it ran.'),
    [`${sum}remaining_cost`]: Type.Optional(Nullable(Type.Number({
      description: 'Addition, with prices only: allocated_cost − used_cost, negative when overspent; null without allocated_cost.',
    }))),
    burn_rate_cost_per_day: money('the cost of the GPU time of the trailing 7 days, per day.'),
    projected_used_cost_at_period_end: nullableMoney('used_cost + burn rate × days left in the period; null for the `total` period.'),
    projected_cost_exhaustion_at: Type.Optional(Nullable(Type.String({
      format: 'date-time',
      description: 'Addition, with prices only: when remaining_cost reaches 0 at the burn rate, as projected_exhaustion_at ' +
        'for GPU-hours; null without allocated_cost.',
    }))),
    unpriced_gpu_hours: money('the GPU-hours of used_gpu_hours that no rate priced (4 decimals).'),
  };
}

/** A statistic's cost (docs/api.md, "Statistics"): `total_`-prefixed in the summary, which also counts unpriced hours. */
export function statsCostFields(sum: '' | 'total_') {
  return {
    [`${sum}cost`]: Type.Optional(Nullable(Money(
      'the GPU time of the workloads counted (submitted in the range), wherever it ran, at the rates in force while it ran; ' +
        'null when they used GPU time and no rate matched any of it.',
    ))),
    [`${sum}idle_cost`]: Type.Optional(Nullable(Money(
      'the cost of their idle GPU-hours, each workload\'s idle time priced at the rates of its GPU time in proportion; ' +
        'null where no utilization was sampled or cost is null.',
    ))),
    unpriced_gpu_hours: Type.Optional(Money('the GPU-hours counted that no rate matched (4 decimals).')),
  };
}
