// GET /v1/chargeback's JSON (docs/api.md, "Chargeback"): the exact figures of the query rounded so that
// the statement adds up, as finance checks it. Each total is its exact value rounded to the currency's
// minor units; the rows of each money column are rounded by the largest remainder method to that total
// (with the unallocated line beside them when it is not shared); and a total_cost is the sum of the
// rounded amounts beside it, so every line adds up across and every column down.
import { largestRemainder } from '../domain/largest-remainder.js';
import { toIso } from '../domain/time.js';
import { compare, type ChargebackResult, type ChargebackRow } from '../query/chargeback.js';
import { round } from './presenters.js';

const hours = (v: number) => round(v, 4);

const sumOf = (rows: readonly ChargebackRow[], pick: (row: ChargebackRow) => number) => rows.reduce((sum, row) => sum + pick(row), 0);

/** The rule in words, as `rounding` states it. */
function roundingRule(c: ChargebackResult): string {
  const figures = 'GPU-hours and kWh are rounded to 4 decimals, each on its own.';
  if (c.currency === null) return `No prices for the organization: no amounts. ${figures}`;
  return `Every amount is computed exactly, then rounded to ${c.currency.minorUnits} decimals of ${c.currency.code}: each total to ` +
    'the nearest, and the rows of each money column by the largest remainder method, so that they add up to the total' +
    `${c.unallocated.shared ? '' : ' with the unallocated line'}; a total_cost is the sum of the rounded amounts beside it. ${figures}`;
}

interface RoundedMoney {
  rows: { cost: number; energyCost: number | null; idleCost: number; shared: number; total: number }[];
  cost: number;
  energyCost: number | null;
  idleCost: number;
  unallocatedCost: number;
  totalCost: number;
}

function roundedMoney(c: ChargebackResult, digits: number): RoundedMoney {
  const total = (pick: (row: ChargebackRow) => number) => round(sumOf(c.rows, pick), digits);
  const column = (pick: (row: ChargebackRow) => number, sum: number) => largestRemainder(c.rows.map(pick), digits, sum);
  const cost = total((row) => row.cost);
  const energyCost = c.energyPriced ? total((row) => row.energyCost) : null;
  const idleCost = total((row) => row.idleCost);
  const unallocatedCost = round(c.unallocated.cost, digits);
  const costs = column((row) => row.cost, cost);
  const energy = energyCost === null ? null : column((row) => row.energyCost, energyCost);
  const idle = column((row) => row.idleCost, idleCost);
  const shared = c.unallocated.shared ? column((row) => row.sharedUnallocatedCost, unallocatedCost) : c.rows.map(() => 0);
  return {
    rows: c.rows.map((_, i) => {
      const parts = [costs[i], energy?.[i] ?? 0, shared[i]] as number[];
      return { cost: costs[i] as number, energyCost: energy?.[i] ?? null, idleCost: idle[i] as number, shared: shared[i] as number,
        total: round(parts.reduce((sum, part) => sum + part, 0), digits) };
    }),
    cost, energyCost, idleCost, unallocatedCost,
    totalCost: round(cost + (energyCost ?? 0) + unallocatedCost, digits),
  };
}

export function presentChargeback(c: ChargebackResult) {
  const money = c.currency === null ? null : roundedMoney(c, c.currency.minorUnits);
  const rows = c.rows.map((row, i) => {
    const m = money?.rows[i];
    return {
      initiative_id: row.initiativeId,
      key: row.key,
      gpu_hours: hours(row.gpuHours),
      cost: m?.cost ?? null,
      energy_kwh: hours(row.energyKwh),
      energy_cost: m?.energyCost ?? null,
      idle_gpu_hours: hours(row.idleGpuHours),
      idle_cost: m?.idleCost ?? null,
      shared_unallocated_cost: m?.shared ?? null,
      total_cost: m?.total ?? null,
    };
  });
  // The rounded totals may order two rows within a cent of each other otherwise than the exact ones.
  rows.sort((a, b) => (b.total_cost ?? 0) - (a.total_cost ?? 0) || b.gpu_hours - a.gpu_hours ||
    compare(a.initiative_id, b.initiative_id) || compare(a.key, b.key));
  const idleGpuHours = sumOf(c.rows, (row) => row.idleGpuHours);
  return {
    organization_id: c.organizationId,
    month: c.month,
    from: toIso(c.from),
    to: toIso(c.to),
    complete: c.complete,
    currency: c.currency?.code ?? null,
    group_by: c.groupBy,
    share_idle: c.shareIdle,
    rows,
    idle: { gpu_hours: hours(idleGpuHours), cost: money?.idleCost ?? null },
    unallocated: { gpu_hours: hours(c.unallocated.gpuHours), cost: money?.unallocatedCost ?? null, shared: c.unallocated.shared },
    total: {
      gpu_hours: hours(sumOf(c.rows, (row) => row.gpuHours)),
      cost: money?.cost ?? null,
      energy_kwh: hours(sumOf(c.rows, (row) => row.energyKwh)),
      energy_cost: money?.energyCost ?? null,
      idle_gpu_hours: hours(idleGpuHours),
      idle_cost: money?.idleCost ?? null,
      unallocated_gpu_hours: hours(c.unallocated.gpuHours),
      unallocated_cost: money?.unallocatedCost ?? null,
      total_cost: money?.totalCost ?? null,
    },
    unpriced_gpu_hours: hours(c.unpricedGpuHours),
    rounding: roundingRule(c),
  };
}

export type PresentedChargeback = ReturnType<typeof presentChargeback>;
