import { expect } from 'chai';
import { periodEnd, periodStart } from '../../src/capacity/budget-period.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('query/budget-period', () => {
  const cases: [Parameters<typeof periodStart>[0], string, string | null][] = [
    ['month', '2026-11-22T10:00:00Z', '2026-11-01T00:00:00.000Z'],
    ['month', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00.000Z'],
    ['month', '2026-10-31T23:59:59.999Z', '2026-10-01T00:00:00.000Z'],
    ['quarter', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
    ['quarter', '2026-03-31T23:59:59Z', '2026-01-01T00:00:00.000Z'],
    ['quarter', '2026-04-01T00:00:00Z', '2026-04-01T00:00:00.000Z'],
    ['quarter', '2026-09-30T12:00:00Z', '2026-07-01T00:00:00.000Z'],
    ['quarter', '2026-12-31T23:59:59Z', '2026-10-01T00:00:00.000Z'],
    ['year', '2026-12-31T23:59:59Z', '2026-01-01T00:00:00.000Z'],
    ['year', '2027-01-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['total', '2026-11-22T10:00:00Z', null],
  ];
  for (const [period, now, expected] of cases) {
    it(`starts the ${period} period of ${now} at ${expected ?? 'no start'} (UTC)`, () => {
      expect(iso(periodStart(period, at(now)))).to.equal(expected);
    });
  }

  const ends: [Parameters<typeof periodEnd>[0], string, string | null][] = [
    ['month', '2026-11-22T10:00:00Z', '2026-12-01T00:00:00.000Z'],
    ['month', '2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00.000Z'],
    ['month', '2028-02-29T12:00:00Z', '2028-03-01T00:00:00.000Z'],
    ['month', '2027-02-01T00:00:00Z', '2027-03-01T00:00:00.000Z'],
    ['quarter', '2026-03-31T23:59:59Z', '2026-04-01T00:00:00.000Z'],
    ['quarter', '2026-10-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['year', '2026-12-31T23:59:59Z', '2027-01-01T00:00:00.000Z'],
    ['year', '2028-02-29T00:00:00Z', '2029-01-01T00:00:00.000Z'],
    ['total', '2026-11-22T10:00:00Z', null],
  ];
  for (const [period, now, expected] of ends) {
    it(`ends the ${period} period of ${now} at ${expected ?? 'no end'}` + (expected === null ? '' : ", the next period's start"), () => {
      expect(iso(periodEnd(period, at(now)))).to.equal(expected);
    });
  }
});
