// The forecast arithmetic on figures whose answer is known, at period ends and on a leap day.
import { expect } from 'chai';
import { forecast, type ForecastInput } from '../../src/capacity/budget-forecast.js';
import { periodEnd } from '../../src/capacity/budget-period.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function monthly(now: string, figures: Pick<ForecastInput, 'allocated' | 'used' | 'usedInBurnWindow'>) {
  return forecast({ budgeted: true, now: at(now), periodEnd: periodEnd('month', at(now)), ...figures });
}

describe('query/budget-forecast', () => {
  it('burns the trailing week per day and projects it linearly to the period end', () => {
    // 70 GPU-h in 7 days = 10 per day; 2 days left in November.
    const f = monthly('2026-11-29T00:00:00Z', { allocated: 1000, used: 300, usedInBurnWindow: 70 });
    expect(f.burnRatePerDay).to.equal(10);
    expect(f.projectedUsedAtPeriodEnd).to.equal(320);
    expect(f.projectedExhaustionAt, 'not within the month').to.equal(null);
  });

  it('gives the instant remaining reaches 0 when that falls before the period end', () => {
    // 15 remaining at 10 per day: 1.5 days.
    const f = monthly('2026-11-28T00:00:00Z', { allocated: 315, used: 300, usedInBurnWindow: 70 });
    expect(iso(f.projectedExhaustionAt)).to.equal('2026-11-29T12:00:00.000Z');
  });

  it('gives null when the exhaustion would fall exactly at the period end, when the next period has begun', () => {
    const f = monthly('2026-11-29T00:00:00Z', { allocated: 320, used: 300, usedInBurnWindow: 70 });
    expect(f.projectedUsedAtPeriodEnd).to.equal(320);
    expect(f.projectedExhaustionAt).to.equal(null);
  });

  it('gives the time of reading for a budget already spent, and null for one nobody is burning', () => {
    expect(iso(monthly('2026-11-10T08:00:00Z', { allocated: 100, used: 100, usedInBurnWindow: 0 }).projectedExhaustionAt)).to.equal('2026-11-10T08:00:00.000Z');
    expect(iso(monthly('2026-11-10T08:00:00Z', { allocated: 100, used: 140, usedInBurnWindow: 7 }).projectedExhaustionAt)).to.equal('2026-11-10T08:00:00.000Z');
    const idle = monthly('2026-11-10T08:00:00Z', { allocated: 100, used: 40, usedInBurnWindow: 0 });
    expect([idle.burnRatePerDay, idle.projectedUsedAtPeriodEnd, idle.projectedExhaustionAt]).to.deep.equal([0, 40, null]);
  });

  it('projects across a leap day: 2028-02-29 has one day left in February', () => {
    const f = monthly('2028-02-29T00:00:00Z', { allocated: 100, used: 80, usedInBurnWindow: 140 });
    expect(f.projectedUsedAtPeriodEnd).to.equal(100);
    expect(iso(f.projectedExhaustionAt), 'at 20 per day, 20 remaining runs out when February does').to.equal(null);
  });

  it('uses the quarter and the year ends', () => {
    const quarter = forecast({ budgeted: true, now: at('2026-12-31T00:00:00Z'), periodEnd: periodEnd('quarter', at('2026-12-31T00:00:00Z')), allocated: 1000, used: 500, usedInBurnWindow: 700 });
    expect(quarter.projectedUsedAtPeriodEnd).to.equal(600);
    const year = forecast({ budgeted: true, now: at('2026-12-30T12:00:00Z'), periodEnd: periodEnd('year', at('2026-12-30T12:00:00Z')), allocated: 1000, used: 990, usedInBurnWindow: 70 });
    expect(year.projectedUsedAtPeriodEnd).to.equal(1005);
    expect(iso(year.projectedExhaustionAt)).to.equal('2026-12-31T12:00:00.000Z');
  });

  it('has no period end for `total`: no projection at the end, and any future date for the exhaustion', () => {
    const f = forecast({ budgeted: true, now: at('2026-11-20T00:00:00Z'), periodEnd: null, allocated: 10_000, used: 0, usedInBurnWindow: 70 });
    expect(f.projectedUsedAtPeriodEnd).to.equal(null);
    expect(iso(f.projectedExhaustionAt)).to.equal('2029-08-16T00:00:00.000Z'); // 1,000 days later
  });

  it('names no exhaustion where nothing is allocated and nothing used: a caller without teams', () => {
    expect(monthly('2026-11-10T08:00:00Z', { allocated: 0, used: 0, usedInBurnWindow: 0 }).projectedExhaustionAt).to.equal(null);
    expect(iso(monthly('2026-11-10T08:00:00Z', { allocated: 0, used: 1, usedInBurnWindow: 1 }).projectedExhaustionAt)).to.equal('2026-11-10T08:00:00.000Z');
  });

  it('never names an exhaustion for an organization without a budget', () => {
    const f = forecast({ budgeted: false, now: at('2026-11-20T00:00:00Z'), periodEnd: null, allocated: 0, used: 50, usedInBurnWindow: 70 });
    expect([f.burnRatePerDay, f.projectedUsedAtPeriodEnd, f.projectedExhaustionAt]).to.deep.equal([10, null, null]);
  });
});
