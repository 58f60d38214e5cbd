// The chargeback's rounding (docs/capacity.md, "Chargeback"): a column of amounts rounded to the
// currency's minor units that still adds up to its total, where rounding each to the nearest does not.
import { expect } from 'chai';
import { presentChargeback } from '../../src/api/chargeback-presenter.js';
import { largestRemainder } from '../../src/domain/largest-remainder.js';
import type { ChargebackResult, ChargebackRow } from '../../src/query/chargeback.js';

const cents = (values: readonly number[]) => Math.round(values.reduce((sum, v) => sum + v, 0) * 100);

describe('largestRemainder', () => {
  it('adds up where rounding each to the nearest does not: three thirds of 10.00', () => {
    const thirds = [10 / 3, 10 / 3, 10 / 3];
    expect(cents(thirds.map((v) => Math.round(v * 100) / 100))).to.equal(999);
    const rounded = largestRemainder(thirds, 2);
    expect(rounded).to.deep.equal([3.34, 3.33, 3.33]);
    expect(cents(rounded)).to.equal(1000);
  });

  it('gives the missing units to the largest remainders, ties to the earlier value', () => {
    // 1.004 + 2.006 + 3.005 = 6.015 → 6.02: the floors give 6.00, the two cents go to .6 and .5, not to .4.
    expect(largestRemainder([1.004, 2.006, 3.005], 2)).to.deep.equal([1, 2.01, 3.01]);
    expect(largestRemainder([1.004, 2.005, 3.006], 2, 6.01)).to.deep.equal([1, 2, 3.01]);
    expect(largestRemainder([0.125, 0.125, 0.125, 0.125], 2)).to.deep.equal([0.13, 0.13, 0.12, 0.12]);
  });

  it('keeps each amount within a unit of its exact value, and exact amounts as they are', () => {
    const values = [12.3456, 0.0049, 7.777, 100.001, 0.29, 0.57];
    const rounded = largestRemainder(values, 2);
    rounded.forEach((r, i) => expect(Math.abs(r - (values[i] as number))).to.be.below(0.01));
    expect(cents(rounded)).to.equal(Math.round(values.reduce((s, v) => s + v, 0) * 100));
    // 0.29 × 100 is 28.999999999999996 in binary: still 0.29, not 0.28 and a remainder.
    expect(largestRemainder([0.29, 0.57, 1.1], 2)).to.deep.equal([0.29, 0.57, 1.1]);
  });

  it('adds up to a total the caller gives, and rounds to any minor units', () => {
    expect(largestRemainder([1 / 3, 1 / 3, 1 / 3], 2, 1)).to.deep.equal([0.34, 0.33, 0.33]);
    expect(cents(largestRemainder([0.5, 0.5], 2, 1.02))).to.equal(102);
    expect(cents(largestRemainder([0.5, 0.5], 2, 0.98))).to.equal(98);
    // JPY has no minor units.
    expect(largestRemainder([100.5, 200.5, 300.4], 0)).to.deep.equal([101, 200, 300]);
    expect(largestRemainder([], 2)).to.deep.equal([]);
  });
});

describe('the chargeback\'s statement adds up where each amount rounded alone would not', () => {
  const row = (initiativeId: string): ChargebackRow => ({
    initiativeId, key: null, gpuHours: 1, cost: 10 / 3, energyKwh: 1 / 3, energyCost: 1 / 30, idleGpuHours: 0.1, idleCost: 1 / 3,
    sharedUnallocatedCost: 0, unpricedGpuHours: 0,
  });
  const result = (shared: boolean): ChargebackResult => {
    const rows = ['a', 'b', 'c'].map(row);
    if (shared) for (const r of rows) r.sharedUnallocatedCost = 5 / 3;
    return {
      organizationId: 'acme', month: '2026-11', from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 11, 1), complete: true,
      currency: { code: 'USD', minorUnits: 2 }, energyPriced: true, groupBy: null, shareIdle: shared, rows,
      unallocated: { gpuHours: 2, cost: 5, shared }, unpricedGpuHours: 0,
    };
  };

  for (const shared of [false, true]) {
    it(`in every money column, and each total_cost across (${shared ? 'shared' : 'unallocated apart'})`, () => {
      const s = presentChargeback(result(shared));
      expect(s.rows.map((r) => r.cost)).to.deep.equal([3.34, 3.33, 3.33]);
      expect(s.total).to.include({ cost: 10, energy_cost: 0.1, idle_cost: 1, unallocated_cost: 5, total_cost: 15.1 });
      for (const field of ['cost', 'energy_cost', 'idle_cost'] as const) expect(cents(s.rows.map((r) => r[field] ?? 0))).to.equal(cents([s.total[field] ?? 0]));
      expect(cents(s.rows.map((r) => r.shared_unallocated_cost ?? 0))).to.equal(shared ? 500 : 0);
      expect(cents(s.rows.map((r) => r.total_cost ?? 0)) + (shared ? 0 : 500)).to.equal(cents([s.total.total_cost ?? 0]));
      for (const r of s.rows) expect(cents([r.total_cost ?? 0])).to.equal(cents([r.cost ?? 0, r.energy_cost ?? 0, r.shared_unallocated_cost ?? 0]));
      expect(s.idle.cost).to.equal(1);
    });
  }
});
