// The counting histogram behind `percentiles`: the nearest-rank percentile of what it counted, exactly
// as sorting every value would give it; and, counted from bucket means weighted by their counts, off
// from the exact percentile of the buckets' samples by at most the widest bucket's max − min (the
// bound docs/api.md states).
import { expect } from 'chai';
import fc from 'fast-check';
import { nearestRank, PERCENTILES } from '../../../src/domain/percentiles.js';
import { METRIC_COUNT } from '../../../src/telemetry/rings/metric-codec.js';
import { PercentileHistograms, takeHistograms } from '../../../src/telemetry/summaries/percentile-histogram.js';

/** The nearest-rank percentile by sorting: the value at rank ⌈p × n / 100⌉ (1-based). */
function bySorting(values: readonly number[], percentile: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((percentile * sorted.length) / 100)) - 1] as number;
}

const storedValue = fc.integer({ min: 0, max: 0xffff });

describe('percentile histogram', () => {
  it('nearest rank: the smallest value with at least p % of the values at or below it', () => {
    expect(nearestRank(50, 1)).to.equal(1);
    expect(nearestRank(50, 2)).to.equal(1);
    expect(nearestRank(50, 3)).to.equal(2);
    expect(nearestRank(95, 20)).to.equal(19);
    expect(nearestRank(99, 100)).to.equal(99);
    expect(nearestRank(99, 101)).to.equal(100);
    const h = new PercentileHistograms();
    [10, 20, 30, 40].forEach((v) => h.add(1, v, 1));
    expect(h.percentiles(1, [50, 75, 90, 95, 99])).to.deep.equal([20, 30, 40, 40, 40]);
  });

  it('keeps each metric slot apart, is empty before anything is counted and after a clear, and counts again from zero', () => {
    const h = new PercentileHistograms();
    expect(h.percentiles(0, [50])).to.deep.equal([]);
    h.add(0, 0, 3);
    h.add(0, 0xffff, 1);
    h.add(METRIC_COUNT - 1, 0xffff, 2);
    h.add(METRIC_COUNT - 1, 5, 1);
    expect(h.totals[0]).to.equal(4);
    expect(h.percentiles(0, [50, 75, 99])).to.deep.equal([0, 0, 0xffff]);
    expect(h.percentiles(METRIC_COUNT - 1, [50, 99])).to.deep.equal([0xffff, 0xffff]);
    expect(h.percentiles(1, [50])).to.deep.equal([]);
    h.clear();
    expect([...h.totals]).to.deep.equal(new Array(METRIC_COUNT).fill(0));
    expect(h.counts.every((c) => c === 0)).to.equal(true);
    expect(h.percentiles(0, [50])).to.deep.equal([]);
    h.add(0, 7, 1);
    expect(h.percentiles(0, [50, 99])).to.deep.equal([7, 7]);
  });

  it('matches sorting every value, weights counted as repeats', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(storedValue, fc.integer({ min: 1, max: 300 })), { minLength: 1, maxLength: 300 }), (entries) => {
        const h = takeHistograms();
        const values: number[] = [];
        for (const [value, weight] of entries) {
          h.add(2, value, weight);
          for (let i = 0; i < weight; i += 1) values.push(value);
        }
        expect(h.totals[2]).to.equal(values.length);
        expect(h.percentiles(2, PERCENTILES)).to.deep.equal(PERCENTILES.map((p) => bySorting(values, p)));
      }),
      { numRuns: 300, seed: 20_261_127 },
    );
  });

  it('from bucket means weighted by count: within the widest bucket\'s max − min of the exact percentile', () => {
    // Buckets of samples; the histogram gets each bucket's rounded mean, weighted by its count.
    const buckets = fc.array(fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 60 });
    fc.assert(
      fc.property(buckets, (list) => {
        const h = takeHistograms();
        for (const samples of list) h.add(0, Math.round(samples.reduce((a, b) => a + b, 0) / samples.length), samples.length);
        const all = list.flat();
        const bound = Math.max(...list.map((samples) => Math.max(...samples) - Math.min(...samples)));
        h.percentiles(0, PERCENTILES).forEach((approximate, i) => {
          const exact = bySorting(all, PERCENTILES[i] as number);
          expect(Math.abs(approximate - exact), `p${PERCENTILES[i]}: ${approximate} vs ${exact}, bound ${bound}`).to.be.at.most(bound);
        });
      }),
      { numRuns: 500, seed: 20_261_127 },
    );
  });

  it('shares one set between reads, cleared for each', () => {
    const first = takeHistograms();
    first.add(2, 42, 5);
    first.add(4, 60_000, 1);
    const second = takeHistograms();
    expect(second).to.equal(first);
    expect([...second.totals]).to.deep.equal(new Array(METRIC_COUNT).fill(0));
    expect(second.counts[(2 << 16) | 42]).to.equal(0);
    expect(second.counts[(4 << 16) | 60_000]).to.equal(0);
  });
});
