import { expect } from 'chai';
import type { PriceKey } from '../../src/domain/price-table.js';
import { parsePricesFile } from '../../src/capacity/prices-file.js';
import { priceInterval, rateSegments } from '../../src/domain/rate-segments.js';

const T = (iso: string) => Date.parse(iso);

const TABLE = parsePricesFile(
  `organization_id: acme
currency: USD
gpu_hour_rates:
  - gpu_model: H100
    rate_per_gpu_hour: 4
    effective_from: 2026-01-01
    effective_to: 2026-10-01
  - gpu_model: H100
    rate_per_gpu_hour: 3
    effective_from: 2026-10-01
  - gpu_model: H100
    capacity_type: spot
    rate_per_gpu_hour: 1
    effective_from: 2026-11-01
  - gpu_model: H100
    pool_id: reserved-h100
    rate_per_gpu_hour: 2
    effective_from: 2026-01-01
    effective_to: 2026-11-01
  - rate_per_gpu_hour: 0.5
    effective_from: 2026-06-01
`,
  'test',
);

const key = (over: Partial<PriceKey>): PriceKey => ({
  gpuModel: 'H100', instanceType: 'p5.48xlarge', poolId: null, clusterId: 'c1', capacityType: null, ...over,
});

describe('rates over time', () => {
  it('follows a price change, and a more specific rate over its own span only', () => {
    expect(rateSegments(TABLE, key({ capacityType: 'spot' }))).to.deep.equal([
      { from: -Infinity, to: T('2026-01-01T00:00:00Z'), rate: null },
      { from: T('2026-01-01T00:00:00Z'), to: T('2026-10-01T00:00:00Z'), rate: 4 },
      { from: T('2026-10-01T00:00:00Z'), to: T('2026-11-01T00:00:00Z'), rate: 3 },
      { from: T('2026-11-01T00:00:00Z'), to: Infinity, rate: 1 },
    ]);
    expect(rateSegments(TABLE, key({ poolId: 'reserved-h100' }))).to.deep.equal([
      { from: -Infinity, to: T('2026-01-01T00:00:00Z'), rate: null },
      { from: T('2026-01-01T00:00:00Z'), to: T('2026-11-01T00:00:00Z'), rate: 2 },
      { from: T('2026-11-01T00:00:00Z'), to: Infinity, rate: 3 },
    ]);
    expect(rateSegments(TABLE, key({ gpuModel: null }))).to.deep.equal([
      { from: -Infinity, to: T('2026-06-01T00:00:00Z'), rate: null },
      { from: T('2026-06-01T00:00:00Z'), to: Infinity, rate: 0.5 },
    ]);
  });

  it('prices GPU time split across a change, and counts the hours no rate covers', () => {
    const segments = rateSegments(TABLE, key({}));
    // 2 GPUs from 22:00 on 2025-12-31 to 02:00 on 2026-01-01: 4 GPU-hours unpriced, 4 at 4.
    expect(priceInterval(segments, 2, T('2025-12-31T22:00:00Z'), T('2026-01-01T02:00:00Z'))).to.deep.equal({ cost: 16, unpricedGpuHours: 4 });
    // Half a GPU for 10 h across the October change: 3 h × 0.5 × 4 + 7 h × 0.5 × 3.
    expect(priceInterval(segments, 0.5, T('2026-09-30T21:00:00Z'), T('2026-10-01T07:00:00Z')).cost).to.be.closeTo(6 + 10.5, 1e-9);
    expect(priceInterval(segments, 1, T('2026-10-01T07:00:00Z'), T('2026-10-01T07:00:00Z'))).to.deep.equal({ cost: 0, unpricedGpuHours: 0 });
  });
});
