// The fleet's history in money, through the real index (SQLite file or PostgreSQL): each row at the
// rate its kind of GPU (model, pool, capacity type) had in its bucket, a day inside which a rate
// changes read from its hours, capacity no rate matches counted unpriced, and no cost anywhere
// without prices, from the same reads as before.
import { expect } from 'chai';
import { Pricing } from '../../src/capacity/pricing.js';
import type { ConfigMapPrices } from '../../src/capacity/configmap-prices.js';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { HOUR_MS, type FleetHourRow } from '../../src/domain/fleet-ledger.js';
import type { GpuHourRate, PriceTable } from '../../src/domain/price-table.js';
import { fleetHistory, type FleetHistoryRequest } from '../../src/query/fleet-history.js';
import type { FleetHistoryQuery, OrganizationPrices, WorkloadIndex } from '../../src/query/ports.js';
import { FixedClock } from '../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../support/test-index.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const DAY = 24 * HOUR_MS;
/** The H100 price cut: 10:00 UTC of the second day, inside it. */
const CUT = T0 + DAY + 10 * HOUR_MS;
const BUDGET: CapacityBudget = {
  organizationId: 'acme', period: 'month', allocatedGpuHours: 1, initiatives: [],
  pools: [{ poolId: 'h100', name: 'H100', allocatedGpuHours: 1, instanceTypes: ['p5.48xlarge'] }],
};

function rate(index: number, match: GpuHourRate['match'], ratePerGpuHour: number, effectiveFrom: number, effectiveTo: number | null = null): GpuHourRate {
  return { index, match, ratePerGpuHour, effectiveFrom, effectiveTo };
}

/** H100s at 2.00 until the cut and 3.00 after it; spot GPUs of the h100 pool at 1.00 throughout; A100s not priced. */
const TABLE: PriceTable = {
  organizationId: 'acme', currency: 'USD', minorUnits: 2, energyRatePerKwh: null,
  gpuHourRates: [
    rate(0, { gpuModel: 'H100' }, 2, T0 - 30 * DAY, CUT),
    rate(1, { gpuModel: 'H100' }, 3, CUT),
    rate(2, { poolId: 'h100', capacityType: 'spot' }, 1, T0 - 30 * DAY),
  ],
};

/** The prices as the service serves them (src/capacity/pricing.ts: the pool from the budget). */
function pricesOf(table: PriceTable): OrganizationPrices {
  const source = { version: 1, tableFor: (org: string) => (org === table.organizationId ? table : undefined) } as unknown as ConfigMapPrices;
  const prices = new Pricing(source, { budgetFor: () => BUDGET, budgets: () => [BUDGET] }).pricesFor('acme');
  if (prices === undefined) throw new Error('acme has prices');
  return prices;
}

function hourRow(node: string, hour: number, values: Partial<FleetHourRow>): FleetHourRow {
  return {
    clusterId: 'c1', node, hour, organizationId: 'acme', gpuModel: 'H100', instanceType: 'p5.48xlarge', capacityType: 'on-demand',
    capacityMs: 0, unavailableMs: 0, allocatedMs: 0, idleMs: 0, ...values,
  };
}

describe('fleet/cost', () => {
  let t: TestIndex;
  let reads: Pick<FleetHistoryQuery, 'grain' | 'from' | 'to'>[];
  let index: Pick<WorkloadIndex, 'fleetHistory'>;

  beforeEach(async () => {
    t = await openTestIndex({ clock: new FixedClock(T0 + 3 * DAY) });
    const hours: FleetHourRow[] = [];
    // Three whole days: an on-demand H100 node with 4 of its 8 GPUs allocated (1 idle), a spot one
    // of the same pool all free, and an A100 node out of service.
    for (let at = T0; at < T0 + 3 * DAY; at += HOUR_MS) {
      hours.push(hourRow('h100-od', at, { capacityMs: 8 * HOUR_MS, allocatedMs: 4 * HOUR_MS, idleMs: HOUR_MS }));
      hours.push(hourRow('h100-spot', at, { capacityType: 'spot', capacityMs: 8 * HOUR_MS }));
      hours.push(hourRow('a100', at, { gpuModel: 'A100', instanceType: 'p4d', capacityType: null, capacityMs: 4 * HOUR_MS, unavailableMs: 4 * HOUR_MS }));
    }
    await t.seed.writeFleetLedger({ clusterId: 'c1', expectedMark: null, to: T0 + 3 * DAY, hours });
    reads = [];
    index = {
      fleetHistory: (query) => {
        reads.push({ grain: query.grain, from: query.from, to: query.to });
        return t.index.fleetHistory(query);
      },
    };
  });
  afterEach(() => t.close());

  const history = (request: Omit<FleetHistoryRequest, 'window'>, prices?: OrganizationPrices, window = { from: T0 + 12 * HOUR_MS, to: T0 + 3 * DAY }) =>
    fleetHistory({ index, budget: BUDGET, ...(prices === undefined ? {} : { prices }) }, 'acme', { window, ...request });

  it('reads each row\'s capacity type, on both grains, keeping the kinds of one cluster, model and instance type apart', async () => {
    for (const grain of ['hour', 'day'] as const) {
      const rows = await t.index.fleetHistory({ organizationId: 'acme', grain, from: T0, to: T0 + HOUR_MS, byNode: false, gpuModel: 'H100' });
      expect(rows.map((row) => [row.node, row.instanceType, row.capacityType, row.capacityMs / HOUR_MS]).sort(), grain).to.deep.equal([
        ['', 'p5.48xlarge', 'on-demand', grain === 'hour' ? 8 : 8 * 24],
        ['', 'p5.48xlarge', 'spot', grain === 'hour' ? 8 : 8 * 24],
      ]);
    }
    const [a100] = await t.index.fleetHistory({ organizationId: 'acme', grain: 'hour', from: T0, to: T0 + HOUR_MS, byNode: true, gpuModel: 'A100' });
    expect(a100).to.include({ node: 'a100', capacityType: null });
  });

  it('prices each row at its kind\'s rate in its bucket, reading by hour the day a rate changes inside', async () => {
    const result = await history({ interval: 'day', groupBy: 'node' }, pricesOf(TABLE));
    // 12:00 of the first day to the end of the third: its first day and the day of the cut by hour.
    expect(reads).to.deep.equal([
      { grain: 'day', from: T0 + 2 * DAY, to: T0 + 3 * DAY },
      { grain: 'hour', from: T0 + 12 * HOUR_MS, to: T0 + 2 * DAY },
    ]);
    expect(result.currency).to.deep.equal({ code: 'USD', minorUnits: 2 });
    // The on-demand node: 22 hours at 2.00 (12 of the first day, 10 of the second), 38 at 3.00.
    const perGpu = 22 * 2 + 38 * 3;
    expect(result.groups.get('c1/h100-od')?.cost).to.deep.equal({
      capacityCost: 8 * perGpu, allocatedCost: 4 * perGpu, idleCost: perGpu, unallocatedCost: 4 * perGpu, unpricedGpuHours: 0,
    });
    // The spot node of the h100 pool: its 60 hours at 1.00, all unallocated.
    expect(result.groups.get('c1/h100-spot')?.cost).to.deep.equal({
      capacityCost: 8 * 60, allocatedCost: 0, idleCost: 0, unallocatedCost: 8 * 60, unpricedGpuHours: 0,
    });
    // No rate for the A100s: their capacity is unpriced, and costs nothing.
    expect(result.groups.get('c1/a100')?.cost).to.deep.equal({
      capacityCost: 0, allocatedCost: 0, idleCost: 0, unallocatedCost: 0, unpricedGpuHours: 4 * 60,
    });
    expect(result.summary.cost).to.deep.equal({
      capacityCost: 8 * perGpu + 8 * 60, allocatedCost: 4 * perGpu, idleCost: perGpu, unallocatedCost: 4 * perGpu + 8 * 60,
      unpricedGpuHours: 4 * 60,
    });
    // Per day: the cut's day is 10 hours at 2.00 and 14 at 3.00 for the on-demand node, not a whole day at either.
    expect(result.series?.map((entry) => entry.figures.cost?.capacityCost)).to.deep.equal([
      8 * 12 * 2 + 8 * 12, 8 * (10 * 2 + 14 * 3) + 8 * 24, 8 * 24 * 3 + 8 * 24,
    ]);
  });

  it('costs the same from whole days as from every hour', async () => {
    const window = { from: T0, to: T0 + 3 * DAY };
    const byDay = await history({ groupBy: 'pool_id' }, pricesOf(TABLE), window);
    expect(reads.map((read) => read.grain)).to.deep.equal(['day', 'day', 'hour']);
    const byHour = await history({ groupBy: 'pool_id', interval: 'hour' }, pricesOf(TABLE), window);
    expect(byDay.summary).to.deep.equal(byHour.summary);
    expect([...byDay.groups]).to.deep.equal([...byHour.groups]);
    expect(byDay.groups.get('h100')?.cost?.capacityCost).to.equal(8 * (34 * 2 + 38 * 3) + 8 * 72);
  });

  it('reads whole days when every change falls on a midnight, and filters by pool before pricing', async () => {
    const midnight = { ...TABLE, gpuHourRates: [rate(0, { gpuModel: 'H100' }, 2, T0 - 30 * DAY, T0 + DAY), rate(1, { gpuModel: 'H100' }, 3, T0 + DAY)] };
    const result = await history({ poolId: 'h100' }, pricesOf(midnight), { from: T0, to: T0 + 3 * DAY });
    expect(reads).to.deep.equal([{ grain: 'day', from: T0, to: T0 + 3 * DAY }]);
    // Both H100 nodes (the spot one now at the H100 rate): a day at 2.00, two at 3.00.
    expect(result.summary.cost).to.deep.include({ capacityCost: 16 * (24 * 2 + 48 * 3), unpricedGpuHours: 0 });
  });

  it('has no currency and no cost anywhere without prices, from the reads it always made', async () => {
    const result = await history({ interval: 'day', groupBy: 'node' });
    expect(reads).to.deep.equal([
      { grain: 'day', from: T0 + DAY, to: T0 + 3 * DAY },
      { grain: 'hour', from: T0 + 12 * HOUR_MS, to: T0 + DAY },
    ]);
    expect(result).to.not.have.property('currency');
    const figures = [result.summary, ...result.groups.values(), ...(result.series ?? []).flatMap((entry) => [entry.figures, ...entry.groups.values()])];
    for (const entry of figures) expect(entry).to.not.have.property('cost');
    expect(result.summary.capacityGpuHours).to.equal(20 * 60);
  });
});
