import { expect } from 'chai';
import { mulberry32 } from '../../../sim/random.js';
import { weekStartDay } from '../../../src/domain/trend-interval.js';
import { planWeeks, type WeekPlan } from '../../../src/store/statistics/week-window.js';
import { at } from '../temp-store.js';

const DAY_MS = 86_400_000;
// 2026-11-09 was a Monday.
const MONDAY = at('2026-11-09T00:00:00Z') / DAY_MS;

/** How many times each day is counted: +1 in a weekly row read, ±1 per daily range. */
function coverage(plan: WeekPlan, days: number[]): number[] {
  return days.map((day) => {
    let n = weekStartDay(day) >= plan.weekFrom && weekStartDay(day) <= plan.weekTo ? 1 : 0;
    for (const range of plan.days) if (day >= range.fromDay && day <= range.toDay) n += range.sign;
    return n;
  });
}

/** Days read from the daily rollup, up to today (later ones hold next to nothing). */
const dailyDaysRead = (plan: WeekPlan, today: number) =>
  plan.days.reduce((sum, r) => sum + Math.max(0, Math.min(r.toDay, today) - r.fromDay + 1), 0);

describe('store/week-window', () => {
  it('knows the Mondays, before 1970 too', () => {
    expect(weekStartDay(MONDAY)).to.equal(MONDAY);
    expect(weekStartDay(MONDAY + 6)).to.equal(MONDAY);
    expect(weekStartDay(MONDAY + 7)).to.equal(MONDAY + 7);
    // 1970-01-01, a Thursday, is in the week of Monday 1969-12-29.
    expect(weekStartDay(0)).to.equal(-3);
    expect(weekStartDay(-3)).to.equal(-3);
    expect(weekStartDay(-4)).to.equal(-10);
  });

  it('reads a month that ends yesterday as whole weeks, the first days added, today\'s week less its days to come', () => {
    // Today is a Sunday: the month is Monday + 5 − 29 … Monday + 5 (yesterday, the Saturday).
    const now = (MONDAY + 6) * DAY_MS + 3_600_000;
    const plan = planWeeks(MONDAY + 5 - 29, MONDAY + 5, now);
    expect(plan).to.deep.equal({
      weekFrom: MONDAY - 21,
      weekTo: MONDAY,
      days: [{ fromDay: MONDAY - 24, toDay: MONDAY - 22, sign: 1 }, { fromDay: MONDAY + 6, toDay: MONDAY + 6, sign: -1 }],
    });
  });

  it('reads days alone when a window holds no week worth reading', () => {
    expect(planWeeks(MONDAY + 1, MONDAY + 2, (MONDAY + 10) * DAY_MS)).to.deep.equal({
      weekFrom: 1, weekTo: 0, days: [{ fromDay: MONDAY + 1, toDay: MONDAY + 2, sign: 1 }, { fromDay: 1, toDay: 0, sign: 1 }],
    });
    expect(planWeeks(5, 4, 0).days.every((r) => r.fromDay > r.toDay)).to.equal(true);
  });

  it('counts every day of any window exactly once, and never reads more daily rows than the days themselves', () => {
    const random = mulberry32(11);
    for (let round = 0; round < 2000; round += 1) {
      const firstDay = MONDAY - 40 + Math.floor(random() * 40);
      const lastDay = firstDay - 1 + Math.floor(random() * 50);
      const today = firstDay - 5 + Math.floor(random() * 70);
      const plan = planWeeks(firstDay, lastDay, today * DAY_MS + Math.floor(random() * DAY_MS));
      const days = Array.from({ length: 80 }, (_, i) => firstDay - 10 + i);
      const label = JSON.stringify({ firstDay, lastDay, today, plan });
      expect(coverage(plan, days), label).to.deep.equal(days.map((d) => (d >= firstDay && d <= lastDay ? 1 : 0)));
      expect(dailyDaysRead(plan, today), label).to.be.at.most(Math.max(0, Math.min(lastDay, today) - firstDay + 1));
    }
  });

  it('reads unbounded windows from whole weeks', () => {
    const plan = planWeeks(-1e15, MONDAY + 6, (MONDAY + 20) * DAY_MS);
    expect(plan.weekTo).to.equal(MONDAY);
    expect(coverage(plan, [MONDAY - 400, MONDAY, MONDAY + 6, MONDAY + 7])).to.deep.equal([1, 1, 1, 0]);
  });
});
